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

/// A number as an error message shows it: short for the huge and the tiny (`1e300`, `4e-10`,
/// not 300 digits), as written otherwise (`0`, `0.5`, `86401`).
pub fn num(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e16).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Flatten a parser's message to one line: every run of whitespace (serde's "\nin `field`",
/// toml's snippets) becomes one space.
pub fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What serde's primitive type names mean to a user: `expected u32` says neither that a whole
/// number is wanted nor which.
const PRIMITIVES: [(&str, &str); 9] = [
    ("u8", "a whole number in 0..=255"),
    ("u16", "a whole number in 0..=65535"),
    ("u32", "a whole number in 0..=4294967295"),
    ("u64", "a whole number in 0..=18446744073709551615"),
    ("usize", "a whole number in 0..=18446744073709551615"),
    ("i32", "a whole number in -2147483648..=2147483647"),
    ("i64", "a whole number in -9223372036854775808..=9223372036854775807"),
    ("f64", "a number"),
    ("f32", "a number"),
];

/// A parser's message in our words: `expected u32` becomes the range it means, and a number
/// quoted in backticks is shown short (`5e-324`, not 324 digits of serde's expansion).
pub fn plain_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    // Numbers in backticks, compacted.
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else { break };
        let inner = &rest[open + 1..open + 1 + len];
        out.push_str(&rest[..=open]);
        match inner.parse::<f64>() {
            Ok(v) if inner.len() > 24 => out.push_str(&num(v)),
            _ => out.push_str(inner),
        }
        out.push('`');
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    for (ty, means) in PRIMITIVES {
        let pat = format!("expected {ty}");
        if let Some(at) = out.find(&pat) {
            let end = at + pat.len();
            if !out[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                out.replace_range(at..end, &format!("expected {means}"));
            }
        }
    }
    out
}

/// `key `KEY`: MESSAGE` (one line), or the message alone when there is no key or the message
/// already names it. The one formatting of every parse error: TOML files (scenarios, profiles,
/// testbed scenarios) and JSON text (a Python dict) alike.
pub fn describe_error(key: &str, message: &str, line: Option<usize>) -> String {
    let mut msg = plain_message(&one_line(message));
    if let Some(line) = line {
        msg = format!("line {line}: {msg}");
    }
    if key.is_empty() || key == "." || msg.contains(&format!("`{key}`")) {
        msg
    } else {
        format!("key `{key}`: {msg}")
    }
}

/// Turn a TOML/serde error into one line that names the key path and the line.
pub fn describe_toml_error(path: &serde_path_to_error::Path, err: &toml::de::Error, text: &str) -> String {
    let line = err.span().map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    describe_error(&path.to_string(), err.message(), line)
}

/// Turn a JSON/serde error (a scenario given as a Python dict) into one line that names the
/// key path. serde_json's " at line 1 column N" is dropped: the text is generated, not the
/// user's.
pub fn describe_json_error(path: &serde_path_to_error::Path, err: &serde_json::Error) -> String {
    let full = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    describe_error(&path.to_string(), full.strip_suffix(&position).unwrap_or(&full), None)
}

/// A policy's parameter error as a scenario key's: `key `PREFIX.NAME`: VALUE is not allowed:
/// ALLOWED` (the policy's own dotted name, `elvis.min_work`, loses its prefix).
pub fn policy_error(prefix: &str, e: &eventpath_policy::error::ConfigError) -> String {
    let name = e.param.rsplit('.').next().unwrap_or(e.param);
    let value = match e.value.parse::<f64>() {
        Ok(v) if e.value.len() > 24 => num(v),
        _ => e.value.clone(),
    };
    format!("key `{prefix}.{name}`: {value} is not allowed: {}", e.allowed)
}
