//! An NVMe-like disk assigned to the VM (issue 51, `[vm.disk] kind = "nvme"`): fio's requests
//! go to the controller through a doorbell write without an exit, no host thread serves them,
//! and each completion is an assigned device's MSI-X message. What each delivery mode removes
//! is what it removes for an SR-IOV VF: emulated delivery pays the completion's
//! external-interrupt exit (where the vCPU runs) and its EOI, posted delivery neither, DID also
//! the request timer's two writes.

mod common;

use common::{exits, refused, Sc, Vm};
use eventpath_sim::run::RunOutput;

/// One 1-vCPU VM on `profile` with an NVMe disk running `workload`, idling by polling (DID
/// §5.1, so that the vCPU runs when its completion arrives), with delivery `mode`.
fn nvme(profile: &str, workload: &str, mode: &str) -> Sc {
    Sc::new("nvme", profile)
        .duration(0.05)
        .warmup(0.01)
        .pcpus(4)
        .vm(Vm::new("vm0", 1).guest_idle("poll").delivery(mode).disk("nvme").workload(workload))
}

fn iops(o: &RunOutput) -> f64 {
    o.summary.vms[0].throughput.ops_per_s.expect("a block workload reports its IOPS")
}

/// VM 0's exits of `reason` per completed request.
fn per_request(o: &RunOutput, reason: &str) -> f64 {
    exits(o, reason) / iops(o)
}

const FIO: &str = "kind = \"fio\"";

#[test]
fn the_doorbell_costs_no_exit_and_no_host_thread_serves_the_disk() {
    let o = nvme("did", FIO, "emulated").run_clean();
    let v = &o.summary.vms[0];
    eprintln!("did nvme emulated: {:.0} IOPS, {:?} us, exits {:?}", iops(&o), v.latency_us.mean, common::exit_kinds(&o));
    assert_eq!(exits(&o, "io_instruction"), 0.0, "the SQ doorbell is a store to the mapped BAR");
    let kicks = v.kicks_per_s.expect("kicks") / iops(&o);
    assert!((kicks - 1.0).abs() < 0.02, "one doorbell per synchronous request: {kicks}");
    // The completion: an external-interrupt exit on the running vCPU's pCPU, its injection and
    // its EOI; fio's timer: two writes.
    for (reason, n) in [("external_interrupt", 1.0), ("eoi", 1.0), ("timer", 2.0)] {
        let got = per_request(&o, reason);
        assert!(got > n - 0.05 && got < n + 0.15, "{reason}: {got} per request, expected {n}");
    }
    let b = v.block.as_ref().unwrap();
    assert_eq!(b.device, "nvme");
    assert_eq!(b.queues, 1);
    assert!(o.summary.host.io_threads.iter().all(|t| t.util_pct.unwrap_or(0.0) == 0.0), "{:?}", o.summary.host.io_threads);
    // A read's service (the profile's nvme.read_ns, 80 µs) is most of the completion latency,
    // and a synchronous job gets about one request per latency.
    let mean = v.latency_us.mean.unwrap();
    assert!(mean > 80.0 && mean < 120.0, "{mean} us");
    assert!((iops(&o) * mean / 1e6 - 1.0).abs() < 0.1, "{} IOPS at {mean} us", iops(&o));
}

#[test]
fn posted_delivery_removes_the_completions_exits_and_did_also_the_timer_writes() {
    let emulated = nvme("did", FIO, "emulated").run_clean();
    let posted = nvme("did", FIO, "posted").run_clean();
    let did = nvme("did", FIO, "did").run_clean();
    let eli = nvme("did", FIO, "eli").run_clean();
    for (name, o) in [("emulated", &emulated), ("posted", &posted), ("did", &did), ("eli", &eli)] {
        eprintln!("did nvme {name}: {:.0} IOPS, {:?} us, exits {:?}", iops(o), o.summary.vms[0].latency_us.mean, o.summary.vms[0].exits_per_s);
    }
    // Posted: the VT-d posted interrupt needs no exit and the virtual APIC's EOI none either;
    // what external interrupts remain are the host's own tick (1,000/s on this profile's 3.6).
    assert_eq!(exits(&posted, "eoi"), 0.0);
    assert!(per_request(&posted, "external_interrupt") < 0.15, "{}", per_request(&posted, "external_interrupt"));
    assert!(per_request(&posted, "timer") > 1.95, "posted delivery keeps the TMICT writes");
    // ELI: exitless delivery and EOI for the assigned vector, the timer's writes still exit.
    assert!(per_request(&eli, "eoi") < 0.05);
    assert!(per_request(&eli, "timer") > 1.95);
    // DID: the timer's writes too.
    for reason in ["eoi", "timer", "io_instruction"] {
        assert_eq!(exits(&did, reason), 0.0, "{reason}");
    }
    // Each exit removed is time off the request's path.
    assert!(iops(&posted) > iops(&emulated));
    assert!(iops(&did) > iops(&posted));
}

#[test]
fn the_controller_serves_reads_and_writes_for_their_own_times() {
    let read = nvme("es2", FIO, "posted").run_clean();
    let write = nvme("es2", "kind = \"fio\"\nrw = \"randwrite\"", "posted").run_clean();
    let mixed = nvme("es2", "kind = \"fio\"\nrw = \"randrw\"\nrwmixread = 70", "posted").run_clean();
    let lat = |o: &RunOutput| o.summary.vms[0].latency_us.mean.unwrap();
    eprintln!("es2 nvme: read {:.1} us, write {:.1} us, 70/30 {:.1} us", lat(&read), lat(&write), lat(&mixed));
    // es2's [nvme]: reads 80 µs, writes 20 µs (into the controller's buffer).
    assert!(lat(&write) < 0.5 * lat(&read));
    assert!(lat(&mixed) > lat(&write) && lat(&mixed) < lat(&read));
    let b = mixed.summary.vms[0].block.as_ref().unwrap();
    let share = b.read_iops.unwrap() / iops(&mixed);
    // More reads than 70 % by time, fewer by count: the count is what rwmixread sets.
    assert!((share - 0.7).abs() < 0.05, "{share}");
    assert_eq!(write.summary.vms[0].block.as_ref().unwrap().read_iops, Some(0.0));
}

#[test]
fn the_controllers_units_cap_its_iops_and_a_deep_queue_fills_them() {
    let deep = "kind = \"fio\"\niodepth = 32";
    let qd1 = nvme("es2", FIO, "posted").run_clean();
    let qd32 = nvme("es2", deep, "posted").run_clean();
    let two_units = nvme("es2", deep, "posted").profile_override("nvme.units", 2).run_clean();
    eprintln!("es2 nvme: qd1 {:.0}, qd32 {:.0}, qd32 on 2 units {:.0} IOPS", iops(&qd1), iops(&qd32), iops(&two_units));
    assert!(iops(&qd32) > 8.0 * iops(&qd1));
    // Two units at 80 µs a read: at most 25,000 IOPS, and a queue of 32 keeps both busy.
    let ceiling = 2.0 / 80e-6;
    assert!(iops(&two_units) <= ceiling * 1.05 && iops(&two_units) > 0.8 * ceiling, "{}", iops(&two_units));
    // A deep queue's completions share interrupts (an entry posted while the vector is still
    // pending merges into it, and the handler takes every entry it finds).
    let irqs = qd32.summary.vms[0].interrupts_per_s.unwrap() / iops(&qd32);
    assert!(irqs < 0.95, "{irqs} interrupts per request");
}

#[test]
fn jobs_get_a_queue_pair_and_a_vector_per_vcpu() {
    let sc = Sc::new("nvme-mq", "modern")
        .duration(0.05)
        .warmup(0.01)
        .pcpus(8)
        .vm(Vm::new("vm0", 4).delivery("posted").disk("nvme").workload("kind = \"fio\"\nnumjobs = 4\niodepth = 8"));
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert_eq!(o.summary.vms[0].block.as_ref().unwrap().queues, 4);
    assert!(l.irq_raised.iter().all(|&n| n > 100), "each queue's vector to its own vCPU: {:?}", l.irq_raised);
    assert!(o.summary.host.io_threads.iter().all(|t| t.util_pct.unwrap_or(0.0) == 0.0));
    // Determinism: same scenario and seed, same run.
    let strip = |mut o: RunOutput| {
        o.summary.wall_seconds = 0.0;
        format!("{:?}", o.summary)
    };
    assert_eq!(strip(o), strip(sc.run()));
}

#[test]
fn nvme_keys_that_do_not_apply_are_refused_naming_the_key() {
    // A disk is a block workload's.
    refused(Sc::new("nvme", "did").vm(Vm::new("vm0", 1).disk("nvme").workload("kind = \"udp_stream\"\nmessage_bytes = 512")), "vm[0].disk.kind", &["block workload"]);
    // ELVIS's host runs Linux 3.1, before the nvme driver (3.3): its profile has no [nvme].
    refused(nvme("elvis", FIO, "emulated"), "vm[0].disk.kind", &["no [nvme]"]);
    refused(nvme("did", FIO, "emulated").edit_vm(0, |v| v.net("queue_size = 64")), "vm[0].net.queue_size", &["NVMe disk", "remove"]);
    refused(nvme("did", FIO, "emulated").edit_vm(0, |v| v.vhost_pin(1)), "vm[0].net.vhost_pin", &["no back-end thread"]);
    let m = nvme("did", FIO, "emulated").edit_vm(0, |v| v.disk("scsi")).error();
    assert!(m.contains("scsi") && m.contains("nvme"), "{m}");
    // An assigned disk needs no back end: ES2's joint threads (virtio-net's) are no refusal here,
    // and eli and did deliver its vector directly.
    nvme("es2", FIO, "posted").io("handling = \"es2\"").check();
    nvme("did", FIO, "eli").check();
}
