//! ELVIS fine-grained I/O scheduling (placeholder).
