//! Interrupt moderation (placeholder).
