//! The whole crate's imports (issue 46): every `crate::…` path (and `super::…`, and a parent's
//! `use child::…`) of every file under `src/` is an edge to the file that defines the module it
//! names; the graph must have no circle. So no file under `model/` uses an item of
//! `model/mod.rs` (which declares and re-exports the parts), and `scenario/` and `run/`, which
//! sit above the model, are read by no model file but the build (`model/build.rs`), the one
//! leaf meant for them. And every import runs downward through the crate's levels
//! ([`LEVELS`]: engine < config, metrics < profile < the model's layers in their order < the
//! model root < scenario, summary < sanity < run < the tools), the build's two reads of the
//! levels above it the only listed exceptions ([`UPWARD`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`, as (path relative to `src/`, text).
fn files(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// The module path of a file (`model/hw/mod.rs` → `model::hw`; `lib.rs` → ``).
fn module_of(rel: &str) -> String {
    let stem = rel.trim_end_matches(".rs");
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" { String::new() } else { stem.replace('/', "::") }
}

/// The code of a file without its comments and its unit tests (a path in a doc comment is no
/// import; a test module may use its parent's items).
fn code(text: &str) -> String {
    let body = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Expand `a::{b, c::{d, e}}` (the text after `crate::`) into its paths.
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else { return vec![path.to_string()] };
    let (head, rest) = (&path[..open], &path[open + 1..]);
    // The matching brace.
    let (mut depth, mut end) = (1, rest.len());
    for (i, ch) in rest.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &rest[..end];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().map(str::trim).filter(|p| !p.is_empty()).flat_map(|p| expand(&format!("{head}{p}"))).collect()
}

/// The longest prefix of `path`'s segments that is a module of the crate. (An item of the
/// crate root, `lib.rs`, is the public API's re-export of a module's item: no edge.)
fn resolve(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segs: Vec<&str> = path.split("::").map(|s| s.trim()).collect();
    (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m))
}

/// The modules a file's code names: `crate::` paths, `super::` paths, and (a module file's)
/// `use child::…` of its own children.
fn imports(rel: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let me = module_of(rel);
    let parent = me.rsplit_once("::").map_or(String::new(), |(p, _)| p.to_string());
    let mut out = BTreeSet::new();
    let path_at = |s: &str| -> String {
        let end = s.find(|c: char| !(c.is_alphanumeric() || "_:{}, \n".contains(c))).unwrap_or(s.len());
        // A brace group ends at its matching brace; a plain path at the first non-path char.
        let s = &s[..end];
        if let Some(b) = s.find('{') {
            let mut depth = 0;
            for (i, ch) in s[b..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return s[..b + i + 1].to_string();
                        }
                    }
                    _ => {}
                }
            }
        }
        s.split(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("").to_string()
    };
    for (prefix, base) in [("crate::", String::new()), ("super::", parent.clone())] {
        for (i, _) in code.match_indices(prefix) {
            if prefix == "super::" && i > 0 && code[..i].ends_with("::") {
                continue;
            }
            let p = path_at(&code[i + prefix.len()..]);
            for q in expand(&p) {
                let full = if base.is_empty() { q } else { format!("{base}::{q}") };
                if let Some(m) = resolve(&full, modules) {
                    out.insert(m);
                }
            }
        }
    }
    if rel.ends_with("mod.rs") || rel == "lib.rs" {
        for line in code.lines() {
            let t = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            if let Some(rest) = t.strip_prefix("use ") {
                if rest.starts_with("crate::") || rest.starts_with("super::") || rest.starts_with("std::") {
                    continue;
                }
                for q in expand(rest.trim_end_matches(';')) {
                    let full = if me.is_empty() { q } else { format!("{me}::{q}") };
                    if let Some(m) = resolve(&full, modules) {
                        out.insert(m);
                    }
                }
            }
        }
    }
    out.remove(&me);
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut fs = Vec::new();
    files(&root, &root, &mut fs);
    let modules: BTreeSet<String> = fs.iter().map(|(rel, _)| module_of(rel)).collect();
    let mut modules = modules;
    modules.remove("");
    fs.iter().map(|(rel, text)| (module_of(rel), imports(rel, &code(text), &modules))).collect()
}

/// Imports that may close a circle inside a layer. Issue 46 emptied it: a context trait's
/// state types live apart from the operations implemented for it, and each layer's operations
/// that call one another are declared once (`hypervisor/ops.rs`, `guest/ops.rs`; `io/seam.rs`
/// for the back ends), so no file imports one that imports it back. No edge may join it.
const KNOWN_BACK_EDGES: &[(&str, &str)] = &[];

#[test]
fn the_known_back_edges_still_exist() {
    let g = graph();
    for (a, b) in KNOWN_BACK_EDGES {
        assert!(g.get(*a).is_some_and(|d| d.contains(*b)), "{a} no longer imports {b}: take it off KNOWN_BACK_EDGES");
    }
}

#[test]
fn the_crate_has_no_import_circle() {
    let mut g = graph();
    for (a, b) in KNOWN_BACK_EDGES {
        g.get_mut(*a).map(|d| d.remove(*b));
    }
    assert!(g["model::hw::vf"].contains("model::hw::event"), "the scan finds nothing: {:?}", g["model::hw::vf"]);
    assert!(g["model"].contains("model::hypervisor::vcpu"), "a parent's use of its child is an edge: {:?}", g["model"]);
    fn visit<'a>(m: &'a str, g: &'a BTreeMap<String, BTreeSet<String>>, path: &mut Vec<&'a str>, done: &mut BTreeSet<&'a str>, found: &mut Vec<String>) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| *p == m) {
            found.push(format!("{} -> {m}", path[i..].join(" -> ")));
            return;
        }
        path.push(m);
        for d in g.get(m).into_iter().flatten() {
            visit(d, g, path, done, found);
        }
        path.pop();
        done.insert(m);
    }
    let (mut done, mut found) = (BTreeSet::new(), Vec::new());
    for m in g.keys() {
        visit(m, &g, &mut Vec::new(), &mut done, &mut found);
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn no_model_file_reads_the_scenario_or_the_run_but_the_build() {
    let g = graph();
    let mut bad = Vec::new();
    for (m, deps) in &g {
        if !m.starts_with("model") || m == "model::build" {
            continue;
        }
        for d in deps {
            if d == "scenario" || d.starts_with("scenario::") || d == "run" || d.starts_with("run::") {
                bad.push(format!("{m} imports {d}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_layers_import_no_file_of_the_model_root() {
    // A layer schedules its own events (`engine::Schedule`) and acts through its context: it
    // names no root module (`model::event`, `model::host`, the glue).
    let g = graph();
    let layers = ["hw", "hypervisor", "io", "guest", "workload"];
    let is_layer = |m: &str| layers.iter().any(|l| m == format!("model::{l}") || m.starts_with(&format!("model::{l}::")));
    let mut bad = Vec::new();
    for (m, deps) in &g {
        if !is_layer(m) {
            continue;
        }
        for d in deps {
            if (d == "model" || d.starts_with("model::")) && !is_layer(d) {
                bad.push(format!("{m} imports {d}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The crate's levels, lowest first (DESIGN §2): a file may import its own level and those
/// below, never one above. The model's layers in their order, then the model root (dispatch,
/// build, ledger, contexts), then what sits above the model: the scenario that describes a run,
/// its summary, the checks of it, the run itself, and the tools over runs.
const LEVELS: &[&[&str]] = &[
    &["engine", "error"],
    &["config", "metrics"],
    &["profile"],
    &["model::hw"],
    &["model::hypervisor"],
    &["model::io"],
    &["model::guest"],
    &["model::workload"],
    &["model"],
    &["scenario", "summary"],
    &["sanity"],
    &["run"],
    &["bench", "fuzz", ""],
];

/// Imports upward that are allowed: the build reads the checked scenario and the run's
/// external policies (`model/build.rs`, the one leaf meant for them). An edge may leave this
/// list, never join it.
const UPWARD: &[(&str, &str)] = &[("model::build", "scenario"), ("model::build", "run")];

/// The level of module `m`: the longest prefix of its path that `LEVELS` names.
fn level(m: &str) -> usize {
    let segs: Vec<&str> = m.split("::").collect();
    for n in (0..=segs.len()).rev() {
        let prefix = segs[..n].join("::");
        if let Some(l) = LEVELS.iter().position(|names| names.contains(&prefix.as_str())) {
            return l;
        }
    }
    panic!("{m}: in no level");
}

#[test]
fn every_file_of_the_crate_imports_downward() {
    let g = graph();
    assert!(g.contains_key("scenario") && g.contains_key("run") && g.contains_key("model::build"), "the scan covers the whole crate");
    let mut bad = Vec::new();
    let mut used = BTreeSet::new();
    for (m, deps) in &g {
        for d in deps {
            if level(d) > level(m) {
                let top = d.split("::").next().unwrap_or("");
                match UPWARD.iter().find(|(a, b)| a == m && (*b == top || b == d)) {
                    Some(e) => {
                        used.insert(*e);
                    }
                    None => bad.push(format!("{m} (level {}) imports {d} (level {})", level(m), level(d))),
                }
            }
        }
    }
    assert!(bad.is_empty(), "imports against the levels:\n{}", bad.join("\n"));
    let stale: Vec<_> = UPWARD.iter().filter(|e| !used.contains(*e)).collect();
    assert!(stale.is_empty(), "no longer imported upward: take them off UPWARD: {stale:?}");
}
