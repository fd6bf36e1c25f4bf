//! KVM testbed (DESIGN §5): a minimal VMM, a purpose-built guest whose loops run at CPL3, and host
//! backend threads that serve its virtqueues through the same `eventpath-policy` state machines as
//! the simulator. See docs/kvm.md.
//!
//! ```text
//!  vCPU threads (KVM_RUN) ── guest CPL3 loop: requests -> avail ring, kick if asked
//!        │  ioeventfd (kick)                       ^ irqfd + MSI route (interrupt)
//!        v                                         │
//!  backend threads ([host.io]: vhost | ES2 | ELVIS | PMD, policy) -> complete -> moderation -> routing
//! ```
pub mod backend;
pub mod error;
pub mod guest;
pub mod measure;
pub mod probe;
pub mod run;
pub mod scenario;
pub mod virtq;
pub mod vmm;

pub use error::{Error, Result};

/// Can the testbed run here? `(true, "...")` or `(false, reason)`.
pub fn available() -> (bool, String) {
    match vmm::open_kvm().and_then(|k| {
        k.create_vm().map(|_| ()).map_err(|e| Error::Unavailable(format!("KVM_CREATE_VM failed: {e}")))
    }) {
        Ok(()) => (true, "/dev/kvm usable".into()),
        Err(e) => (false, e.to_string()),
    }
}

/// Runs the scenario file at `path`, writes `out_dir/summary.json`, returns its text.
pub fn run_scenario(path: &str, out_dir: &str) -> Result<String> {
    let s = scenario::Scenario::load(path)?;
    let text = measure::summary::to_json(&run::run(&s)?);
    std::fs::create_dir_all(out_dir)?;
    std::fs::write(std::path::Path::new(out_dir).join("summary.json"), &text)?;
    Ok(text)
}
