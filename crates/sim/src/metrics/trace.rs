//! Names of timeline events (`eventpath trace`; the timeline itself is written by
//! `model/trace/writer.rs` as it is recorded).

/// An event's name: a static string, or one interned once at set-up (so that recording never
/// allocates a name).
#[derive(Debug, Clone, Copy)]
pub enum Name {
    /// A literal.
    Static(&'static str),
    /// Index into the timeline's interned names.
    Interned(u32),
}

impl From<&'static str> for Name {
    fn from(s: &'static str) -> Name {
        Name::Static(s)
    }
}
