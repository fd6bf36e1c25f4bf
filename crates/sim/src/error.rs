//! Input errors: each names the key, the bad value and what is allowed. The CLI prints the
//! message as one line and exits with code 2.

use thiserror::Error;

/// Everything a user can get wrong before a simulation starts.
#[derive(Debug, Error)]
pub enum InputError {
    /// The scenario file could not be read.
    #[error("cannot read scenario {path}: {reason}")]
    ScenarioUnreadable {
        /// Path as given.
        path: String,
        /// OS error text.
        reason: String,
    },
    /// The scenario is not valid TOML or does not match the schema.
    #[error("scenario {path}: {message}")]
    Scenario {
        /// Path (or `<string>`).
        path: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A profile is unknown, unreadable or malformed.
    #[error("profile {name}: {message}")]
    Profile {
        /// Profile name or path.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A run option (seed, duration, ...) is out of range.
    #[error("{0}")]
    Option(String),
}

/// Result alias for input handling.
pub type InputResult<T> = Result<T, InputError>;

/// Turn a TOML/serde error into one line that names the key path.
pub(crate) fn describe_toml_error(
    path: &serde_path_to_error::Path,
    err: &toml::de::Error,
    text: &str,
) -> String {
    let mut msg = err.message().trim().replace('\n', " ");
    let key = path.to_string();
    if let Some(span) = err.span() {
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        msg = format!("line {line}: {msg}");
    }
    if key.is_empty() || key == "." || msg.contains(&format!("`{key}`")) {
        msg
    } else {
        format!("key `{key}`: {msg}")
    }
}
