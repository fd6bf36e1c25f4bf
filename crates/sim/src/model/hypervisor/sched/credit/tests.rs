//! Unit tests of the credit scheduler: priorities, runqueue order, accounting, stealing.
