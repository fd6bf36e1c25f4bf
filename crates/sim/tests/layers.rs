//! The model's layers (DESIGN §2 "Walls inside the simulator"): `model/` is in folders —
//! `hw/` < `hypervisor/` < `io/` < `guest/` < `workload/` — and imports run downward only: a
//! file may name its own layer and the layers below, never one above. The model root (`Host`,
//! the event dispatch, the build, the summaries, and the contexts through which the layers act:
//! `cx.rs`, `app_ctx.rs`) is above them all. No layer file extends `Host` (an `impl Host`
//! block reaches into the whole model); the root files that do are listed in [`ROOT_ON_HOST`].
//! The contexts through which the layers act hand out no `&mut Host`, no `&mut Vcpu` and no
//! scheduler, and their methods only shrink ([`CONTEXT_METHODS`]).

use std::collections::BTreeSet;
use std::path::Path;

const LAYERS: [&str; 5] = ["hw", "hypervisor", "io", "guest", "workload"];

/// The model root's files that extend `Host`, one concern and one `impl Host` block each (issue
/// 46): the event dispatch (`mod.rs`), the build, the NIC path's glue (`port.rs`), the
/// workload seam's (`apps.rs`), the back-end seam's (`backend.rs`), the watchdog's look
/// (`liveness.rs`), the timeline's hooks, the ledger and the debug invariants. The host's state
/// itself is `host.rs`, which extends nothing. A file may leave the list, never join it.
const ROOT_ON_HOST: &[&str] = &["apps.rs", "backend.rs", "build.rs", "invariants.rs", "ledger.rs", "liveness.rs", "mod.rs", "port.rs", "timeline.rs"];

/// Every `.rs` file under `dir`, as (path relative to `model/`, text).
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

fn model_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model");
    let mut v = Vec::new();
    files(&root, &root, &mut v);
    v.sort();
    v
}

/// The layer a file is in (its first folder), if any.
fn layer_of(rel: &str) -> Option<usize> {
    let first = rel.split('/').next()?;
    rel.contains('/').then(|| LAYERS.iter().position(|l| *l == first)).flatten()
}

/// The code of a file without its comments (a path in a doc comment is no import).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Does the code extend `Host` (an `impl Host` block) or take it whole (`&mut Host`)?
fn extends_host(code: &str) -> bool {
    code.contains("impl Host {") || code.contains("impl Host\n") || code.contains("&mut Host")
}

#[test]
fn imports_run_downward_only() {
    let mut bad = Vec::new();
    for (rel, text) in model_files() {
        let Some(mine) = layer_of(&rel) else { continue };
        let code = code(&text);
        for (above, name) in LAYERS.iter().enumerate().skip(mine + 1) {
            if code.contains(&format!("crate::model::{name}::")) || code.contains(&format!("crate::model::{name};")) {
                bad.push(format!("{rel} ({}) imports {name} (above it)", LAYERS[mine]));
            }
            let _ = above;
        }
        assert!(!code.contains("super::super::"), "{rel}: reach other layers by crate::model:: paths");
    }
    assert!(bad.is_empty(), "imports against the layers:\n{}", bad.join("\n"));
}

#[test]
fn no_layer_file_extends_host_and_the_root_files_that_do_stay_few() {
    let mut on_host = BTreeSet::new();
    let mut blocks = 0;
    for (rel, text) in model_files() {
        let code = code(&text);
        if !extends_host(&code) {
            continue;
        }
        assert!(layer_of(&rel).is_none(), "{rel} extends Host: give the part its own type, or act through the layer's context");
        on_host.insert(rel);
        blocks += code.matches("impl Host {").count();
    }
    let listed: BTreeSet<String> = ROOT_ON_HOST.iter().map(|s| s.to_string()).collect();
    let joined: Vec<_> = on_host.difference(&listed).collect();
    assert!(joined.is_empty(), "new root files extending Host: {joined:?}");
    let left: Vec<_> = listed.difference(&on_host).collect();
    assert!(left.is_empty(), "these no longer extend Host: take them off ROOT_ON_HOST: {left:?}");
    assert!(blocks <= ROOT_ON_HOST.len(), "{blocks} `impl Host` blocks: one per root file");
}

#[test]
fn the_layers_use_no_host() {
    // Layer files reach the model root for nothing but its event type.
    for (rel, text) in model_files() {
        if layer_of(&rel).is_none() {
            continue;
        }
        let code = code(&text);
        for item in ["Host", "NetDev", "VmState"] {
            for pat in [format!("crate::model::{item}"), format!("crate::model::{{{item}"), format!(", {item}}}"), format!("{{Ev, {item}")] {
                assert!(!code.contains(&pat), "{rel} uses the model root's {item}");
            }
        }
    }
}

/// The workload modules a workload file imports (`crate::model::workload::NAME`, or `super::`):
/// an item of the registry (`workload/mod.rs`) counts as importing `mod`.
fn workload_imports(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let prefix = "crate::model::workload::";
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let is_module = modules.contains(&name) && rest[name.len()..].starts_with("::");
        out.insert(if is_module { name } else { "mod".to_string() });
    }
    if code.contains("super::") {
        out.insert("mod".to_string());
    }
    out
}

#[test]
fn workloads_import_in_one_direction() {
    // The registry (`mod.rs`) imports the applications; an application that imported the
    // registry back (`App`, `Step`, `Sender` from `mod.rs`) would close a circle. Any circle
    // among the workload modules fails here.
    let files: Vec<(String, String)> = model_files()
        .into_iter()
        .filter_map(|(rel, text)| rel.strip_prefix("workload/").and_then(|f| f.strip_suffix(".rs")).map(|m| (m.to_string(), code(&text))))
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let graph: std::collections::BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .map(|(m, c)| (m.clone(), workload_imports(c, &modules).into_iter().filter(|d| d != m).collect()))
        .collect();
    assert!(graph["mod"].contains("app") && graph["tcp"].contains("app"), "the import scan finds nothing: {graph:?}");
    // Depth-first search for a back edge.
    fn visit<'a>(m: &'a str, g: &'a std::collections::BTreeMap<String, BTreeSet<String>>, path: &mut Vec<&'a str>, done: &mut BTreeSet<&'a str>) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("import circle among workloads: {} -> {m}", path[i..].join(" -> "));
        }
        path.push(m);
        for d in g.get(m).into_iter().flatten() {
            visit(d, g, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

/// The body of `trait NAME` in a file (up to its closing brace at column 0).
fn trait_body(rel: &str, name: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model").join(rel)).unwrap();
    let code = code(&text);
    let start = code.find(&format!("trait {name}")).unwrap_or_else(|| panic!("{rel}: no trait {name}"));
    let end = code[start..].find("\n}").map_or(code.len(), |e| start + e);
    code[start..end].to_string()
}

/// The required methods of the contexts through which the lower layers act (issue 46). Each may
/// only shrink: a new need of a layer is a decision it returns, or a service truly below it.
const CONTEXT_METHODS: &[(&str, &str, usize)] = &[("hypervisor/ctx.rs", "Machine", 7), ("guest/ctx.rs", "Kernel", 14), ("workload/ctx.rs", "Ctx", 28)];

#[test]
fn no_context_hands_out_the_host_a_vcpu_or_the_scheduler() {
    for (rel, name, most) in CONTEXT_METHODS {
        let body = trait_body(rel, name);
        let methods = body.matches("    fn ").count();
        assert!(methods <= *most, "{rel}: {name} has {methods} methods (at most {most}: the list only shrinks)");
        for bad in ["&mut Host", "&mut Vcpu", "&mut Scheduler", "&mut [Vcpu]", "&mut SoftirqCpus"] {
            assert!(!body.contains(bad), "{rel}: {name} hands out {bad}");
        }
        // The hypervisor's own state only behind the key its files alone can make.
        for line in body.lines().filter(|l| l.contains("Parts<")) {
            assert!(line.contains("key: Own"), "{rel}: {name}: {line}");
        }
    }
    let ctx = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model/hypervisor/ctx.rs")).unwrap();
    assert!(ctx.contains("pub(crate) struct Own(());") && ctx.contains("pub(in crate::model::hypervisor) const OWN"), "the key's constructor is private to hypervisor/");
}
