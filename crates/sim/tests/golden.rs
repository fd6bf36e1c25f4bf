//! Golden summaries: every example, reproduction scenario and repro layout gives exactly the
//! summary checked in under `tests/golden/` (wall-clock time aside), at a short duration. A
//! change that moves one must say which and why in its commit message; regenerate them with
//! `EVENTPATH_BLESS=1 cargo test -p eventpath-sim --test golden`.

use eventpath_sim::run::{run_scenario, RunOptions};
use std::path::{Path, PathBuf};

/// Measured simulated seconds per scenario (warm-up as the file says).
const DURATION_S: f64 = 0.05;

fn scenarios() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = Vec::new();
    for dir in ["../../examples", "../../python/eventpath/reproduce/scenarios", "tests/repro"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn summary_json(path: &Path) -> String {
    let o = run_scenario(path.to_str().unwrap(), &RunOptions { duration_s: Some(DURATION_S), ..Default::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v = serde_json::to_value(&o.summary).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

#[test]
fn summaries_match_the_golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("EVENTPATH_BLESS").is_some();
    let mut moved = Vec::new();
    let paths = scenarios();
    assert!(paths.len() >= 25, "{paths:?}");
    // A golden file is named by its scenario's stem: two scenarios of one stem would share it.
    let mut stems: Vec<_> = paths.iter().map(|p| p.file_stem().unwrap().to_owned()).collect();
    stems.sort();
    let n = stems.len();
    stems.dedup();
    assert_eq!(stems.len(), n, "two scenarios share a file name; rename one");
    for p in paths {
        let name = p.file_stem().unwrap().to_str().unwrap().to_owned() + ".json";
        let got = summary_json(&p);
        let file = dir.join(&name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &got).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(got.as_str()) {
            moved.push(name);
        }
    }
    assert!(moved.is_empty(), "summaries moved (EVENTPATH_BLESS=1 to accept, and say why in the commit): {moved:?}");
}
