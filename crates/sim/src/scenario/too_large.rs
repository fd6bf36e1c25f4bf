//! The message for a whole number beyond TOML's integers: toml's parser knows no key for it.

/// A whole number beyond TOML's 64-bit integers fails in toml's parser, which knows no key:
/// the literal is replaced by a marker string and the text parsed again, so that the marker's
/// type error names the key and the type (the range) it wants.
pub(super) fn integer_too_large(e: &toml::de::Error, text: &str) -> Option<String> {
    const MARK: &str = "\u{1}too large";
    let too_large = |e: &toml::de::Error| e.message().contains("number too large") || e.message().contains("number too small");
    // toml's span is the literal's first character: the literal runs to the next delimiter.
    let literal_at = |text: &str, start: usize| {
        let len = text[start..].find(|c: char| !(c.is_ascii_alphanumeric() || "+-_".contains(c))).unwrap_or(text.len() - start);
        start..start + len
    };
    if !too_large(e) {
        return None;
    }
    let span = literal_at(text, e.span()?.start.min(text.len()));
    let literal = &text[span.clone()];
    let line = text[..span.start].matches('\n').count() + 1;
    let mut retry = format!("{}\"\\u0001too large\"{}", &text[..span.start], &text[span.end..]);
    // Later literals as large are neutralized: the first is the one reported.
    let mut err = None;
    for _ in 0..64 {
        match serde_path_to_error::deserialize::<_, super::Scenario>(toml::Deserializer::new(&retry)) {
            Err(e) if too_large(e.inner()) => {
                let Some(at) = e.inner().span() else { break };
                let s = literal_at(&retry, at.start.min(retry.len()));
                retry.replace_range(s, "0");
            }
            Err(e) if e.inner().message().contains(&format!("{MARK:?}")) => {
                err = Some(e);
                break;
            }
            _ => break,
        }
    }
    let Some(err) = err else {
        // No typed key took the marker (a `[profile_overrides]` value): TOML's own bound, and
        // the key as the line and its section header write it.
        let before = &text[..span.start];
        let key = before.rsplit('\n').next().and_then(|l| l.split_once('=')).map(|(k, _)| k.trim()).filter(|k| !k.is_empty());
        let header = before.lines().rev().map(str::trim).find(|l| l.starts_with('[')).map(|h| h.trim_matches(|c| c == '[' || c == ']').trim());
        let key = match (header, key) {
            (Some(h), Some(k)) => format!("key `{h}.{k}`: "),
            (None, Some(k)) => format!("key `{k}`: "),
            _ => String::new(),
        };
        return Some(format!(
            "{key}line {line}: {literal} is not allowed; TOML integers are -9223372036854775808..=9223372036854775807 (write a larger value as a float, e.g. 1e19)"
        ));
    };
    let mut message = err.inner().message().replacen(&format!("invalid type: string {MARK:?},"), &format!("{literal} is not allowed;"), 1);
    for wide in ["expected u64", "expected usize", "expected i64"] {
        message = message.replace(wide, "expected a whole number in 0..=9223372036854775807 (the largest TOML integer)");
    }
    Some(crate::error::describe_error(&err.path().to_string(), &message, Some(line)))
}

