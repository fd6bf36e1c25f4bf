//! Errors of the testbed. `Input` and `Unavailable` are the user's to fix (exit 2 in the CLI).
/// Testbed error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario or argument is wrong; the message names the key, the value and what is allowed.
    #[error("{0}")]
    Input(String),
    /// /dev/kvm is missing or lacks something the testbed needs.
    #[error("KVM unavailable: {0}")]
    Unavailable(String),
    /// A KVM ioctl failed.
    #[error("KVM: {0}")]
    Kvm(String),
    /// The guest misbehaved in a way that stops the run (an exception in the guest).
    #[error("guest: {0}")]
    Guest(String),
    /// Writing results failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Is this the user's input (scenario, arguments, machine) rather than a testbed failure?
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Input(_) | Error::Unavailable(_))
    }
}

impl From<crate::vmm::memory::OutOfRange> for Error {
    fn from(e: crate::vmm::memory::OutOfRange) -> Self {
        Error::Kvm(format!("set-up wrote outside guest memory: {e}"))
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;
