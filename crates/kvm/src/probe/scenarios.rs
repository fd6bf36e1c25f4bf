//! The probe's testbed scenarios, built as [`Scenario`] values. Where the process may use two
//! CPUs the vCPU runs on the first allowed one and the backend thread or interrupt generator on
//! the second (ids of the affinity mask: under `taskset -c 2,3` those are CPUs 2 and 3).
use crate::scenario::{Handling, IoHandling, IrqGenCfg, LoadCfg, Scenario, VmCfg};
use crate::vmm::sys;

/// (vCPU pins, backend/generator CPU): the first two allowed CPUs, or none with one CPU.
fn pins() -> (Vec<usize>, Option<usize>) {
    match sys::allowed_cpus()[..] {
        [a, b, ..] => (vec![a], Some(b)),
        _ => (vec![], None),
    }
}

/// Scenario "probe": `dur` seconds measured after 50 ms, VM "vm0" (one vCPU, pinned) running `load`.
fn one_vm(dur: f64, kick: &str, load: LoadCfg) -> Scenario {
    let vm = VmCfg { name: "vm0".into(), kick: kick.into(), pin: pins().0, load: vec![load], ..Default::default() };
    Scenario { name: "probe".into(), duration_s: dur, warmup_s: 0.05, vm: vec![vm], ..Default::default() }
}

/// `s` with a back end of `handling` ("vhost", or "pmd" busy polling) on the back-end CPU
/// (a PMD needs a core: CPU 0 on a one-CPU host, where the vCPU is not pinned).
fn with_backend(mut s: Scenario, handling: Handling) -> Scenario {
    match handling {
        Handling::Pmd => s.host.io = IoHandling { handling, cores: Some(vec![pins().1.unwrap_or(sys::allowed_cpus()[0]) as u32]), ..Default::default() },
        _ => s.backend.pin = pins().1.into_iter().collect(),
    }
    s
}

/// A stream of `rate` requests/s to a back end of `handling`.
pub fn stream(kick: &str, handling: Handling, rate: f64, dur: f64) -> Scenario {
    let load = LoadCfg { pattern: "stream".into(), rate, ..Default::default() };
    with_backend(one_vm(dur, kick, load), handling)
}

/// A vCPU that does nothing but notify: `kick_loop` (ioeventfd) or `exit_loop` (userspace exit).
pub fn notify_loop(pattern: &str, kick: &str, dur: f64) -> Scenario {
    one_vm(dur, kick, LoadCfg { pattern: pattern.into(), ..Default::default() })
}

/// Open-loop MSIs every `gap_us` ± 50 % to an `irq_sink` vCPU that halts when idle or spins.
pub fn irq(gap_us: f64, halt: bool, halt_poll_ns: Option<u64>, dur: f64) -> Scenario {
    let mut s = one_vm(dur, "pio", LoadCfg { pattern: "irq_sink".into(), halt_when_idle: halt, ..Default::default() });
    s.vm[0].halt_poll_ns = halt_poll_ns;
    s.irqgen = Some(IrqGenCfg { gap_us, vm: 0, vcpu: 0, pin: pins().1 });
    s
}

/// One request every `gap_us` to a vhost back end that sleeps in poll(2) between them.
pub fn sparse_kicks(kick: &str, gap_us: f64, dur: f64) -> Scenario {
    let load = LoadCfg { pattern: "burst".into(), burst: 1, gap_us, ..Default::default() };
    with_backend(one_vm(dur, kick, load), Handling::Vhost)
}

#[cfg(test)]
mod tests {
    //! Each scenario is the one the probe used to write as TOML text and parse back (in
    //! today's keys: `[host.io]` for the polling back end).
    use super::*;

    fn toml_pins() -> (String, String) {
        match sys::allowed_cpus()[..] {
            [a, b, ..] => (format!("pin = [{a}]"), format!("pin = [{b}]")),
            _ => (String::new(), String::new()),
        }
    }

    fn header(dur: f64) -> String {
        format!("name = \"probe\"\nduration_s = {dur}\nwarmup_s = 0.05\n")
    }

    fn parsed(text: String) -> String {
        format!("{:?}", Scenario::parse(&text).unwrap())
    }

    fn same(built: Scenario, text: String) {
        built.validate().unwrap();
        assert_eq!(format!("{built:?}"), parsed(text));
    }

    #[test]
    fn built_scenarios_equal_the_old_toml_texts() {
        let (vp, bp) = toml_pins();
        let cpus = sys::allowed_cpus();
        let core = cpus.get(1).copied().unwrap_or(cpus[0]);
        for (kick, handling, table) in [
            ("pio", Handling::Pmd, format!("[host.io]\nhandling = \"pmd\"\ncores = [{core}]")),
            ("mmio", Handling::Vhost, format!("[backend]\n{bp}")),
        ] {
            let text = format!(
                "{}{table}\n[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"stream\"\nrate = {}\n",
                header(0.15),
                1e5
            );
            same(stream(kick, handling, 1e5, 0.15), text);
        }
        for (pattern, kick) in [("exit_loop", "pio"), ("kick_loop", "mmio")] {
            let text = format!("{}[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"{pattern}\"\n", header(0.5));
            same(notify_loop(pattern, kick, 0.5), text);
        }
        for (gap_us, halt, halt_poll) in [(100.0, false, None), (1000.0, true, Some(0u64)), (100.0, true, Some(2_000_000))] {
            let bp = bp.replace(['[', ']'], "");
            let hp = halt_poll.map(|n| format!("halt_poll_ns = {n}")).unwrap_or_default();
            let text = format!(
                "{}[irqgen]\ngap_us = {gap_us}\n{bp}\n[[vm]]\nname = \"vm0\"\n{vp}\n{hp}\n[[vm.load]]\npattern = \"irq_sink\"\nhalt_when_idle = {halt}\n",
                header(0.15)
            );
            same(irq(gap_us, halt, halt_poll, 0.15), text);
        }
        for kick in ["pio", "mmio"] {
            let text = format!(
                "{}[backend]\n{bp}\n[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"burst\"\nburst = 1\ngap_us = {}\n",
                header(0.5),
                200.0
            );
            same(sparse_kicks(kick, 200.0, 0.5), text);
        }
    }
}
