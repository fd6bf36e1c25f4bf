//! A profile file that overlays values on another (issue 50 item 4: a production host's own
//! measurements on a built-in profile's hardware and kernel).
//!
//! `base = "modern"` at the top of a profile file (a built-in profile's name, or a path,
//! relative to the file) takes every value of that profile; each parameter the file gives
//! replaces the base's whole (value, unit, range and source: a measured value's spread is not
//! the base's range), and its source is prefixed with the file and the base, so a run's
//! `profile.json` says which values came from where. Sections absent from the base (`[numa]`,
//! `[sriov]`) are added; everything is then checked as one profile, so a key the format does not
//! know is refused as in any profile file.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// Deepest chain of bases (a base that has a base ...): more is taken for a cycle.
const MAX_DEPTH: usize = 4;

/// The profile text `text` (of the file or built-in `name`, in directory `dir`) stands for: its
/// base's values with its own over them, or `None` when it names no base.
pub(super) fn resolve(name: &str, text: &str, dir: Option<&Path>, depth: usize) -> Result<Option<String>, String> {
    // Text that does not parse is left to the profile's own parser, whose message names the key.
    let Ok(mut over) = toml::from_str::<Table>(text) else { return Ok(None) };
    let Some(base) = over.remove("base") else { return Ok(None) };
    let Value::String(base) = base else {
        return Err("key `base`: expected a string: a built-in profile's name or a profile file's path".into());
    };
    if depth >= MAX_DEPTH {
        return Err(format!("key `base`: \"{base}\": bases nest deeper than {MAX_DEPTH} (a profile that is its own base?)"));
    }
    let (base_text, base_dir) = read(&base, dir)?;
    let base_text = resolve(&base, &base_text, base_dir.as_deref(), depth + 1)
        .map_err(|m| format!("base \"{base}\": {m}"))?
        .unwrap_or(base_text);
    let mut doc: Table = toml::from_str(&base_text).map_err(|e| format!("base \"{base}\": {}", e.message()))?;
    let base_name = doc.get("name").and_then(Value::as_str).unwrap_or(&base).to_string();
    let file = Path::new(name).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| name.into());
    for (k, fallback) in [
        ("name", format!("{base_name}+{}", file.trim_end_matches(".toml"))),
        ("description", format!("{} — with the values of {file}", doc.get("description").and_then(Value::as_str).unwrap_or(&base_name))),
    ] {
        if !over.contains_key(k) {
            over.insert(k.into(), Value::String(fallback));
        }
    }
    merge(&mut doc, over, &format!("{file} (over {base_name})"));
    Ok(Some(toml::to_string(&doc).map_err(|e| format!("cannot write the merged profile: {e}"))?))
}

/// A base's text and the directory its own relative base would be read from.
fn read(base: &str, dir: Option<&Path>) -> Result<(String, Option<PathBuf>), String> {
    if let Some((_, text)) = super::BUILTIN.iter().find(|(n, _)| *n == base) {
        return Ok((text.to_string(), None));
    }
    if !(base.contains('/') || base.ends_with(".toml")) {
        let known: Vec<&str> = super::BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(format!("key `base`: \"{base}\": no such built-in profile; they are {} (or give a path to a .toml file)", known.join(", ")));
    }
    let path = match dir {
        Some(d) if Path::new(base).is_relative() => d.join(base),
        _ => PathBuf::from(base),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("key `base`: {}: cannot read file: {e}", path.display()))?;
    Ok((text, path.parent().map(Path::to_path_buf)))
}

/// `over`'s keys into `into`: a parameter (a table with a `value`) replaces the base's whole,
/// its source saying `origin`; any other table merges key by key.
fn merge(into: &mut Table, over: Table, origin: &str) {
    for (k, v) in over {
        match v {
            Value::Table(mut param) if param.contains_key("value") => {
                if let Some(Value::String(src)) = param.get("source").cloned() {
                    param.insert("source".into(), Value::String(format!("{origin}: {src}")));
                }
                into.insert(k, Value::Table(param));
            }
            Value::Table(t) => match into.get_mut(&k) {
                Some(Value::Table(b)) => merge(b, t, origin),
                _ => {
                    let mut fresh = Table::new();
                    merge(&mut fresh, t, origin);
                    into.insert(k, Value::Table(fresh));
                }
            },
            v => {
                into.insert(k, v);
            }
        }
    }
}
