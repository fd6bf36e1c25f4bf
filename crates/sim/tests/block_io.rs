//! Block I/O on the event path (issue 51): fio and filebench on a VM's virtio-blk disk over a
//! host RAM disk. Each request is a kick (unless the device suppressed it), a back-end item
//! (its cost the profile's `[blk]`), a completion interrupt through the VM's delivery mode and
//! guest work on both sides; fio's request timer adds two LAPIC timer writes. What each
//! delivery mode removes is the exits it removes for a NIC: posted delivery the completion's
//! EOI, DID also the timer writes; the kick stays under all of them.

mod common;

use common::{exits, refused, Sc, Vm};
use eventpath_sim::run::RunOutput;

/// One 1-vCPU VM on `profile` running `workload` (a block kind's lines), with `vm_extra` lines.
fn disk(profile: &str, workload: &str, vm_extra: &str) -> Sc {
    Sc::new("block", profile).duration(0.05).warmup(0.01).pcpus(4).vm(Vm::new("vm0", 1).lines(vm_extra).workload(workload))
}

fn iops(o: &RunOutput) -> f64 {
    o.summary.vms[0].throughput.ops_per_s.expect("a block workload reports its IOPS")
}

/// VM 0's exits of `reason` per completed request.
fn per_request(o: &RunOutput, reason: &str) -> f64 {
    exits(o, reason) / iops(o)
}

#[test]
fn a_sync_fio_job_pays_a_kick_an_eoi_a_halt_and_two_timer_writes_per_request() {
    // The emulated LAPIC (es2's stock is posted interrupts, whose EOI does not exit).
    let o = disk("es2", "kind = \"fio\"", "interrupt_delivery = \"emulated\"").run_clean();
    let v = &o.summary.vms[0];
    eprintln!("es2 fio: {:.0} IOPS, {:?} us; exits {:?}", iops(&o), v.latency_us.mean, v.exits_per_s);
    assert!(iops(&o) > 5_000.0, "{}", iops(&o));
    for (reason, n) in [("io_instruction", 1.0), ("eoi", 1.0), ("hlt", 1.0), ("timer", 2.0)] {
        let got = per_request(&o, reason);
        assert!((got - n).abs() < 0.05, "{reason}: {got} per request, expected {n}");
    }
    // randread: every request a read; no payload on the link.
    let b = v.block.as_ref().expect("a block VM reports vms[].block");
    assert_eq!(b.read_iops, v.throughput.ops_per_s);
    assert_eq!(b.write_iops, Some(0.0));
    assert!((b.bandwidth_mb_s.unwrap() - iops(&o) * 4096.0 / 1e6).abs() < 1e-6);
    assert_eq!(v.throughput.gbps, None);
    // The completion latency holds the back end's work and both exits' costs at least.
    assert!(v.latency_us.mean.unwrap() > 5.0);
    assert!(o.summary.host.io_threads.iter().any(|t| t.name == "iothread-vm0" && t.util_pct.unwrap_or(0.0) > 1.0));
}

#[test]
fn posted_delivery_removes_the_completions_eoi_and_did_also_the_timer_writes() {
    // DID's host (idle=poll in its guests, DID §5.1): no HLT exits to begin with.
    let poll = "guest_idle = \"poll\"";
    let emulated = disk("did", "kind = \"fio\"", poll).run_clean();
    let posted = disk("did", "kind = \"fio\"", &format!("{poll}\ninterrupt_delivery = \"posted\"")).run_clean();
    let did = disk("did", "kind = \"fio\"", &format!("{poll}\ninterrupt_delivery = \"did\"")).run_clean();
    for (name, o) in [("emulated", &emulated), ("posted", &posted), ("did", &did)] {
        eprintln!("did profile, {name}: {:.0} IOPS, {:?} us, exits {:?}", iops(o), o.summary.vms[0].latency_us.mean, common::exit_kinds(o));
    }
    assert!(per_request(&emulated, "eoi") > 0.95);
    assert!(per_request(&emulated, "timer") > 1.95);
    assert_eq!(exits(&posted, "eoi"), 0.0);
    assert_eq!(exits(&posted, "interrupt_delivery"), 0.0);
    assert!(per_request(&posted, "timer") > 1.95, "posted delivery keeps the TMICT writes");
    assert_eq!(exits(&did, "eoi"), 0.0);
    assert_eq!(exits(&did, "timer"), 0.0);
    // The kick exits under every mode (no mode removes the I/O instruction).
    for o in [&emulated, &posted, &did] {
        assert!(per_request(o, "io_instruction") > 0.95);
    }
    // DID §5.6's direction: DID raises IOPS over the emulated baseline (a prediction: the
    // published 14K -> 14.7K is not a target here).
    assert!(iops(&did) > iops(&emulated));
}

#[test]
fn without_the_request_timer_no_timer_writes() {
    let o = disk("es2", "kind = \"fio\"\nrequest_timer = false", "").run_clean();
    // (The guest's own tick still re-arms its timer, 250 times a second on this profile.)
    assert!(per_request(&o, "timer") < 0.01, "{}", per_request(&o, "timer"));
    assert!(per_request(&o, "io_instruction") > 0.95);
}

#[test]
fn a_deeper_queue_suppresses_kicks_and_interrupts_and_raises_iops() {
    let one = disk("es2", "kind = \"fio\"\nrequest_timer = false", "").run_clean();
    let deep = disk("es2", "kind = \"fio\"\nrequest_timer = false\niodepth = 32", "").run_clean();
    eprintln!("iodepth 1: {:.0} IOPS; 32: {:.0} IOPS, {:.2} kicks and {:.2} EOIs per request", iops(&one), iops(&deep), per_request(&deep, "io_instruction"), per_request(&deep, "eoi"));
    assert!(iops(&deep) > 1.3 * iops(&one));
    // The event index: a kick only when the back end asked (it drains a batch), an interrupt
    // only once the driver re-enabled callbacks after draining.
    assert!(per_request(&deep, "io_instruction") < 0.5);
    assert!(per_request(&deep, "eoi") < 0.9);
    assert!(deep.summary.vms[0].latency_us.mean > one.summary.vms[0].latency_us.mean);
}

#[test]
fn jobs_spread_over_a_request_queue_per_vcpu_each_with_its_thread_and_interrupt() {
    let sc = |jobs: u32| {
        Sc::new("block-mq", "modern").duration(0.05).warmup(0.01).pcpus(8).vm(Vm::new("vm0", 4).workload(&format!("kind = \"fio\"\nnumjobs = {jobs}")))
    };
    let (one, l1) = sc(1).run_with_ledger();
    let (four, l4) = sc(4).run_with_ledger();
    l1.check().unwrap();
    l4.check().unwrap();
    assert_eq!(four.summary.vms[0].block.as_ref().unwrap().queues, 4);
    assert_eq!(one.summary.vms[0].block.as_ref().unwrap().queues, 1);
    let threads: Vec<_> = four.summary.host.io_threads.iter().filter(|t| t.name.starts_with("iothread-vm0")).collect();
    assert_eq!(threads.len(), 4, "{:?}", four.summary.host.io_threads.iter().map(|t| &t.name).collect::<Vec<_>>());
    // Each queue's interrupt goes to its own vCPU.
    assert!(l4.irq_raised.iter().all(|&n| n > 100), "{:?}", l4.irq_raised);
    assert!(l1.irq_raised[1..].iter().all(|&n| n == 0), "{:?}", l1.irq_raised);
    eprintln!("modern, 1 job {:.0} IOPS, 4 jobs {:.0}", iops(&one), iops(&four));
    assert!(iops(&four) > 3.0 * iops(&one));
    // More jobs than vCPUs: queues stay one per vCPU, jobs share them.
    let eight = sc(8).run_clean();
    assert_eq!(eight.summary.vms[0].block.as_ref().unwrap().queues, 4);
    assert!(iops(&eight) > iops(&four));
}

#[test]
fn a_completion_routed_to_another_vcpu_wakes_its_job_with_a_reschedule_ipi() {
    let sc = |routing: &str| {
        Sc::new("block-route", "es2")
            .duration(0.05)
            .warmup(0.01)
            .pcpus(4)
            .vm(Vm::new("vm0", 2).delivery("emulated").routing(routing).workload("kind = \"fio\""))
    };
    let (fixed, lf) = sc("fixed").run_with_ledger();
    let (rr, lr) = sc("lowest_priority_rr").run_with_ledger();
    lf.check().unwrap();
    lr.check().unwrap();
    // Fixed: every completion on vCPU 0, where the job is; vCPU 1 takes nothing.
    assert_eq!(lf.irq_raised[1], 0, "{:?}", lf.irq_raised);
    // Round robin: half the completions go to vCPU 1, whose handler wakes the job on vCPU 0
    // with a reschedule IPI, so vCPU 0 still takes one vector per request (its own
    // completions and the wake-ups). (As a NIC's TX handler waking its writers, the wake's
    // ICR write is not charged to the handler's vCPU: see docs/model.md.)
    let requests = iops(&rr) * 0.05;
    let (v0, v1) = (lr.irq_raised[0] as f64, lr.irq_raised[1] as f64);
    assert!(v1 > 0.3 * requests && v1 < 0.7 * requests, "{v1} completions on vCPU 1 of {requests}");
    assert!(v0 > 0.9 * requests, "{v0} vectors on vCPU 0 for {requests} requests");
    assert!(per_request(&rr, "eoi") > 1.3, "the wake-up's EOI besides the completion's");
    assert!(iops(&rr) > 0.5 * iops(&fixed));
}

#[test]
fn filebench_threads_of_several_vms_share_elvis_io_core() {
    let mut sc = Sc::new("filebench-elvis", "elvis").duration(0.05).warmup(0.01).pcpus(5).io("handling = \"elvis\"\ncores = [4]");
    for i in 0..3 {
        sc = sc.vm(Vm::new(&format!("vm{i}"), 1).pins(&[i]).delivery("eli").workload("kind = \"filebench\""));
    }
    let o = sc.run_clean();
    let io = &o.summary.host.io_threads;
    assert_eq!(io.len(), 1, "one I/O core thread serves every disk: {:?}", io.iter().map(|t| &t.name).collect::<Vec<_>>());
    for v in &o.summary.vms {
        let b = v.block.as_ref().unwrap();
        eprintln!("{}: {:?} ops/s ({:?} reads, {:?} writes), {:?} us; exits {:?}", v.name, v.throughput.ops_per_s, b.read_iops, b.write_iops, v.latency_us.mean, v.exits_total_per_s);
        // Four readers and four writers: as many reads as writes, within the noise of turns.
        let (r, w) = (b.read_iops.unwrap(), b.write_iops.unwrap());
        assert!(r > 1000.0 && (r - w).abs() < 0.1 * (r + w), "{r} reads/s, {w} writes/s");
        // ELVIS's I/O core polls a busy queue (kicks only until it does) and interrupts
        // exitlessly (ELI: no EOI exit but the guest tick's, injected as before).
        for reason in ["io_instruction", "eoi"] {
            assert!(v.exits_per_s[reason].unwrap() < 0.01 * (r + w), "{reason}: {:?}/s", v.exits_per_s[reason]);
        }
    }
}

#[test]
fn a_mixed_job_reads_its_share() {
    let o = disk("es2", "kind = \"fio\"\nrw = \"randrw\"\nrwmixread = 70", "").run_clean();
    let b = o.summary.vms[0].block.as_ref().unwrap();
    let share = b.read_iops.unwrap() / iops(&o);
    assert!((share - 0.7).abs() < 0.05, "{share}");
}

#[test]
fn a_disk_on_another_socket_pays_the_remote_copy() {
    // The elvis host has two sockets ([numa]); the iothread pinned on socket 0's pCPU 1.
    let sc = |node: u32| {
        Sc::new("block-numa", "elvis")
            .duration(0.05)
            .warmup(0.01)
            .pcpus(16)
            .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).set("memory_node", node).workload("kind = \"fio\"\nblock_bytes = 65536"))
    };
    let local = sc(0).run_clean();
    let remote = sc(1).run_clean();
    let t = |o: &RunOutput| o.summary.host.io_threads[0].remote_items_pct;
    assert_eq!(t(&local), Some(0.0));
    assert_eq!(t(&remote), Some(100.0));
    assert!(remote.summary.vms[0].latency_us.mean > local.summary.vms[0].latency_us.mean);
}

#[test]
fn same_scenario_and_seed_give_the_same_block_run() {
    let sc = disk("modern", "kind = \"fio\"\nrw = \"randrw\"\nnumjobs = 3\niodepth = 4", "");
    let strip = |mut o: RunOutput| {
        o.summary.wall_seconds = 0.0;
        format!("{:?}", o.summary)
    };
    assert_eq!(strip(sc.run()), strip(sc.run()));
}

#[test]
fn block_keys_that_do_not_apply_are_refused_naming_the_key() {
    let fio = "kind = \"fio\"";
    refused(disk("es2", fio, "").io("handling = \"es2\""), "vm[0].workload.kind", &["ES2", "virtio-net"]);
    refused(disk("es2", fio, "[vm.net]\nqueue_size = 64"), "vm[0].net.queue_size", &["virtio-blk", "remove"]);
    refused(disk("es2", fio, "[vm.net]\nbusyloop_timeout_us = 50"), "vm[0].net.busyloop_timeout_us", &["virtio-blk"]);
    refused(disk("es2", fio, "[vm.net.moderation]\nkind = \"cgr\""), "vm[0].net.moderation", &["virtio-blk"]);
    let m = disk("es2", "kind = \"fio\"\nblock_bytes = 1000", "").error();
    assert!(m.contains("vm[0].workload.block_bytes") && m.contains("multiple of 512"), "{m}");
    let m = disk("es2", "kind = \"fio\"\nrwmixread = 30", "").error();
    assert!(m.contains("vm[0].workload.rwmixread") && m.contains("randrw"), "{m}");
    let m = disk("es2", "kind = \"filebench\"\nreaders = 0\nwriters = 0", "").error();
    assert!(m.contains("no thread"), "{m}");
    let m = disk("es2", "kind = \"fio\"\niodepth = 0", "").error();
    assert!(m.contains("vm[0].workload.iodepth"), "{m}");
}

#[test]
fn a_profile_without_a_block_device_refuses_a_block_workload() {
    let es2 = eventpath_sim::profile::BUILTIN.iter().find(|(n, _)| *n == "es2").unwrap().1;
    let without = &es2[..es2.find("\n[blk]").expect("es2 has [blk]")];
    let dir = std::env::temp_dir().join(format!("eventpath-blk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("noblk.toml");
    std::fs::write(&path, without.replacen("name = \"es2\"", "name = \"noblk\"", 1)).unwrap();
    let m = Sc::new("block", path.to_str().unwrap()).vm(Vm::new("vm0", 1).workload("kind = \"fio\"")).check_error();
    assert!(m.contains("has no [blk]"), "{m}");
}

#[test]
fn random_block_layouts_run_to_their_end_with_balanced_ledgers() {
    let n: u64 = std::env::var("EVENTPATH_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let mut ran = 0;
    for case in 0..n * 10 {
        let Some(s) = eventpath_sim::fuzz::block_scenario(case) else { continue };
        match eventpath_sim::fuzz::check_scenario(&s) {
            Ok(eventpath_sim::fuzz::Outcome::Ok) => ran += 1,
            Ok(eventpath_sim::fuzz::Outcome::Rejected(m)) => panic!("case {case}: a generated block layout was refused: {m}\n{s}"),
            Err(f) => panic!("case {case}: {}\n{}", f.what, f.scenario),
        }
    }
    assert!(ran >= n as usize, "{ran} block layouts of {} cases", n * 10);
}
