//! Configuration errors shared by every policy.

/// A configuration parameter was out of range.
///
/// The message names the parameter, the rejected value and what is allowed, e.g.
/// `es2.perceptive.quota = 0: must be at least 1`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{param} = {value}: {allowed}")]
pub struct ConfigError {
    /// Dotted name of the parameter, as it appears in a scenario file.
    pub param: &'static str,
    /// The rejected value, formatted.
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
}

impl ConfigError {
    /// Builds an error for `param` holding `value`, with `allowed` describing the valid range.
    pub fn new(param: &'static str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Self { param, value: value.to_string(), allowed: allowed.into() }
    }
}

/// Returns an error unless `value >= min`.
pub(crate) fn at_least<T: PartialOrd + std::fmt::Display + Copy>(
    param: &'static str,
    value: T,
    min: T,
) -> Result<(), ConfigError> {
    if value >= min {
        Ok(())
    } else {
        Err(ConfigError::new(param, value, format!("must be at least {min}")))
    }
}

/// Returns an error unless `value` is finite and `> 0`.
pub(crate) fn positive_f64(param: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(param, value, "must be a finite number greater than 0"))
    }
}

/// Returns an error unless `value` is finite and `>= 0`.
pub(crate) fn non_negative_f64(param: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(param, value, "must be a finite number >= 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_param_value_and_range() {
        let e = at_least("es2.perceptive.quota", 0u32, 1).unwrap_err();
        assert_eq!(e.to_string(), "es2.perceptive.quota = 0: must be at least 1");
        assert!(positive_f64("air.c", f64::NAN).is_err());
        assert!(non_negative_f64("air.offset", 0.0).is_ok());
    }
}
