//! A back end is its own files (issue 46, "a new back end in ≤ 5 files, none under `guest/`"):
//! its adapter in `model/io/` (the type that implements `io::Backend`) imports nothing of the
//! guest or the model root, and no file under `model/guest/` — nor a root file of the model —
//! names a back end: the guest sees the seam (`io::queues::Notice`, `io::Event`, the kick and
//! the ring write it signals), never who serves it.

use std::path::Path;

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model")
}

/// A file's code: no comments, no unit tests (a test may build a scenario that names any
/// back end, or load a profile called `es2`).
fn code(text: &str) -> String {
    let body = text.split("#[cfg(test)]").next().unwrap_or(text);
    body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The back ends registered in `io/policy.rs`'s `Policy`: (variant, module), e.g. ("Pmd", "pmd").
fn backends() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(src().join("io/policy.rs")).unwrap();
    let start = text.find("pub(crate) enum Policy {").expect("the back ends' registry");
    let body = &text[start..start + text[start..].find('}').unwrap()];
    body.lines()
        .skip(1)
        .filter_map(|l| {
            let l = l.trim();
            let (variant, rest) = l.split_once('(')?;
            let module = rest.split("::").next()?;
            Some((variant.to_string(), module.to_string()))
        })
        .collect()
}

fn words(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

#[test]
fn the_registry_lists_every_back_end() {
    let b = backends();
    assert_eq!(b.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(), ["Vhost", "Es2", "Elvis", "Pmd"], "{b:?}");
    for (_, m) in &b {
        let text = std::fs::read_to_string(src().join(format!("io/{m}.rs"))).unwrap();
        assert!(text.contains("impl Backend for"), "io/{m}.rs: a back end implements io::Backend");
    }
}

#[test]
fn a_back_ends_files_import_nothing_of_the_guest_or_the_root() {
    let mut bad = Vec::new();
    for (_, m) in backends() {
        let c = code(&std::fs::read_to_string(src().join(format!("io/{m}.rs"))).unwrap());
        for layer in ["guest", "workload"] {
            if c.contains(&format!("crate::model::{layer}")) {
                bad.push(format!("io/{m}.rs imports {layer}/"));
            }
        }
        for root in ["event", "host", "cx", "app_ctx", "backend", "port", "apps", "build"] {
            if c.contains(&format!("crate::model::{root}::")) || c.contains(&format!("crate::model::{root};")) {
                bad.push(format!("io/{m}.rs imports the root's {root}.rs"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn neither_the_guest_nor_the_model_root_names_a_back_end() {
    // A back end's name in any case (`pmd`, `Pmd`, `PMD`), and — as written — the registry,
    // the mechanism behind it and the configuration's choice of one (the root holds the host's
    // `io::Backends`, never one back end).
    let names: Vec<String> = backends().into_iter().flat_map(|(v, m)| [v, m]).collect();
    let items = ["Policy", "Backend", "IoThread", "Handling", "polls_rx"];
    let mut files = Vec::new();
    let mut dirs = vec![src().join("guest")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    for e in std::fs::read_dir(src()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
    let mut bad = Vec::new();
    for p in files {
        let c = code(&std::fs::read_to_string(&p).unwrap());
        for w in words(&c) {
            if names.iter().any(|n| n.eq_ignore_ascii_case(w)) || items.contains(&w) {
                bad.push(format!("{} names {w}", p.strip_prefix(src()).unwrap().display()));
            }
        }
        for (_, m) in backends() {
            let path = format!("io::{m}");
            if c.match_indices(&path).any(|(i, _)| !c[i + path.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')) {
                bad.push(format!("{} imports io/{m}.rs", p.strip_prefix(src()).unwrap().display()));
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "a back end named outside its files:\n{}", bad.join("\n"));
}
