//! Each workload states its own conservation identities (`App::ledger` → `Balance`s), and the
//! ledger's check holds them as it holds the host's: a workload that breaks one is caught.

mod common;

use common::{Sc, Vm};

/// The identities VM 0's workload states in a short run, and whether the ledger balances.
fn balances(workload: &str) -> (Vec<&'static str>, eventpath_sim::model::Conservation) {
    let vm = Vm::new("vm0", 1).workload(workload);
    let (_, l) = Sc::new("ledger", "es2").duration(0.03).warmup(0.005).vm(vm).run_with_ledger();
    (l.workload_balances[0].iter().map(|b| b.what).collect(), l)
}

#[test]
fn each_workload_states_its_own_identities() {
    let cases = [
        ("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 100000", "udp client sent = received + dropped + queued + on link"),
        ("kind = \"tcp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64\nconcurrency = 4", "rr issued + next pending = completed + concurrency"),
        ("kind = \"tcp_receive\"\nmessage_bytes = 1448", "tcp client sent = arrived + on link"),
    ];
    for (w, what) in cases {
        let (whats, l) = balances(w);
        assert_eq!(whats, vec![what], "{w}");
        l.check().unwrap_or_else(|e| panic!("{w}: {e}"));
    }
    // A sender towards the client has none of its own: the host's lines cover it.
    let (whats, _) = balances("kind = \"udp_stream\"\nmessage_bytes = 512\nrate_pps = 10000");
    assert!(whats.is_empty(), "{whats:?}");
}

#[test]
fn a_broken_workload_identity_fails_the_check() {
    let (_, mut l) = balances("kind = \"tcp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64\nconcurrency = 4");
    l.workload_balances[0][0].lhs += 1;
    let e = l.check().expect_err("an unbalanced workload line must fail");
    assert!(e.contains("vm0 rr issued + next pending = completed + concurrency"), "{e}");
}
