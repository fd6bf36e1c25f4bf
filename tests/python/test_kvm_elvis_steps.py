"""KVM testbed: the ELVIS backend (one thread, work + poll queues) and load steps with the
moderators' time series. Real VMs on /dev/kvm; skipped, with the reason, where KVM is not usable.
Shapes compare runs of the same session, with generous margins (the host is loaded)."""
import json
import textwrap

import pytest

from eventpath import _eventpath as E

OK, REASON = E.kvm_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"KVM testbed unavailable: {REASON}")


def run(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    out = tmp_path / (name + ".out")
    d = json.loads(E.kvm_run(str(p), str(out)))
    assert json.loads((out / "summary.json").read_text()) == d
    return d


def vm(i, pattern, rate=1000, extra=""):
    # Only the keys the pattern reads (the parser refuses the others).
    key = {"closed": "window = 4", "stream": f"rate = {rate}"}.get(pattern, "")
    return f"""
[[vm]]
name = "vm{i}"
pin = [0]
[[vm.load]]
pattern = "{pattern}"
{key}
{extra}
"""


def head(handling, threads, warmup=0.05, dur=0.3, extra=""):
    """[backend] and [host.io]: a vhost thread on CPU 1 (backend.pin), the others on host.io.cores;
    ``extra``: more [host.io] keys, or tables after it."""
    pin, cores = ("pin = [1]\n", "") if handling == "vhost" else ("", "cores = [1]\n")
    # ELVIS groups its devices itself (host.io.devices_per_worker): it takes no backend.threads.
    threads = "" if handling == "elvis" else f'threads = "{threads}"\n'
    return f"""name = "t"
duration_s = {dur}
warmup_s = {warmup}
[backend]
{threads}{pin}[host.io]
handling = "{handling}"
{cores}{extra}
"""


def series(d, name):
    s = next(x for x in d["series"] if x["name"] == name)
    return list(zip(s["t_s"], s["value"]))


def test_elvis_one_thread_polls_busy_queues_and_serves_every_vm(tmp_path):
    """Two closed-loop VMs (busy) and one 200 req/s VM: ELVIS serves all three from one thread,
    polls the busy queues (≈0 kicks per request) and leaves the slow one on notifications; one
    vhost thread per device (exit mode) in the same session kicks on a sizeable fraction."""
    vms = vm(0, "closed") + vm(1, "closed") + vm(2, "stream", rate=200)
    ex = run(tmp_path, head("vhost", "per_queue") + vms, "exit.toml")
    # A start threshold other than the prototype's (1 kick per jiffy), so that the 200 req/s
    # queue stays notified: 4 kicks in a 4 ms jiffy (1,000/s) start polling. Idleness is wall
    # time (the prototype's rule): 1 s, far above what a vCPU of a loaded shared host waits
    # for CPU 0 (at 50 ms a starved busy VM lost its polling now and then).
    elvis = "poll_start_per_jiffy = 4\npoll_idle_us = 1000000\n"
    el = run(tmp_path, head("elvis", "shared", extra=elvis) + vms, "elvis.toml")
    assert len(el["host"]["io_threads"]) == 1 and len(ex["host"]["io_threads"]) == 3
    c = el["counters"]["backend"]
    assert c["elvis_poll_turns"] > 0 and c["elvis_work_turns"] > 0, c
    for i in (0, 1):
        e, x = el["vms"][i]["guest"], ex["vms"][i]["guest"]
        assert e["kicks_per_request"] < 0.1, (i, e, c)
        assert e["kicks_per_request"] < x["kicks_per_request"] / 4, (i, e, x)
    # nobody starved: the busy VMs each do a share, the slow VM gets what it offers
    ops = [v["throughput"]["ops_per_s"] or 0 for v in el["vms"]]
    assert min(ops[0], ops[1]) > 0.1 * max(ops[0], ops[1]), ops
    assert ops[2] > 100, ops
    # the slow queue is not polled: it keeps kicking, where the polled busy queues hardly do
    # (its ratio is ~0.2 on an idle host and lower under load: a direction, not a level)
    slow = el["vms"][2]["guest"]["kicks_per_request"]
    busy = max(el["vms"][i]["guest"]["kicks_per_request"] for i in (0, 1))
    assert slow > 0.05 and slow > 4 * busy, (slow, busy)


def test_elvis_starts_polling_on_a_kick_storm_and_stops_after_the_load_drops(tmp_path):
    # The prototype's 3 s idle limit would outlast the run, and its 1 kick per jiffy would
    # restart polling at every slow kick: 50 ms and 4 kicks per jiffy instead.
    extra = "poll_start_per_jiffy = 4\npoll_idle_us = 50000\n"
    text = head("elvis", "shared", warmup=0, dur=0.35, extra=extra) + vm(0, "stream", rate=100000, extra="steps = [{at_s = 0.1, rate = 10}]")
    d = run(tmp_path, text)
    c = d["counters"]["backend"]
    assert c["elvis_start_polling"] >= 1 and c["elvis_stop_polling"] >= 1, c
    # after the drop the thread sleeps: it no longer burns its CPU polling
    assert d["host"]["io_threads"][0]["util_pct"] < 80, d["host"]["io_threads"]
    done = series(d, "vm0.completions_per_s")
    before = [v for t, v in done if 0.02 < t <= 0.1 and v is not None]
    after = [v for t, v in done if t > 0.15 and v is not None]
    assert sum(before) / len(before) > 10 * (sum(after) / len(after) + 1), (before, after)


AIR = """[moderation]
kind = "air"
interval_ns = 20000000
k = 64
c_cycles_per_s = 2.6e9
c_pkt_cycles = 2600.0
c_int_cycles = 91000.0
"""
CGR = """[moderation]
kind = "cgr"
timeslice_ns = 20000000
"""


def step_run(tmp_path, mod, r0, r1, name):
    text = head("vhost", "shared", dur=0.5, extra=mod) + vm(0, "stream", rate=r0, extra=f'consume = "irq"\nsteps = [{{at_s = 0.25, rate = {r1}}}]')
    d = run(tmp_path, text, name)
    rate = series(d, "vm0.q0.allowed_irq_rate")
    mean = lambda xs: sum(xs) / len(xs)
    before = mean([v for t, v in rate if 0.05 < t <= 0.25])
    after = mean([v for t, v in rate if t > 0.4])
    offered = series(d, "vm0.vcpu0.offered_rate")
    assert offered[0][1] == r0 and offered[-1][1] == r1
    return before, after, d


def test_air_and_cgr_follow_a_load_step_the_way_their_rules_say(tmp_path):
    """AIR (Algorithm 1): more bandwidth -> a higher allowed rate (B/(k·S) + offset grows).
    CGR (§4.2): small packets above 20,000/s leave the latency-critical class (100K/s) for the
    latency-sensitive one (20K/s): a lower allowed rate."""
    b, a, d = step_run(tmp_path, AIR, 5000, 80000, "air.toml")
    assert a > 1.3 * b, (b, a)
    irq = series(d, "vm0.interrupts_per_s")
    assert max(v for t, v in irq if t > 0.4 and v) > 1.2 * min(v for t, v in irq if 0.05 < t <= 0.25 and v is not None)
    b, _, d = step_run(tmp_path, CGR, 5000, 80000, "cgr.toml")
    assert b == 100000, b
    # After the step the class is read per 20 ms timeslice from what was delivered in it: on a
    # loaded host (CI runs the Rust suite beside this) a slice that delivered under 20,000/s
    # rightly goes back to latency-critical, so the test holds the median, not every slice.
    after = sorted(v for t, v in series(d, "vm0.q0.allowed_irq_rate") if t > 0.4)
    assert set(after) <= {20000, 100000}, after
    done = [v for t, v in series(d, "vm0.completions_per_s") if t > 0.4 and v is not None]
    if sum(done) / len(done) > 40000:  # the host delivered the step
        assert after[len(after) // 2] == 20000, (after, done)


@pytest.mark.parametrize("handling,extra,needle", [
    ("elvis", "min_work = 100", "key `host.io.min_work`: 100 exceeds max_work's default 64"),
    ("elvis", "max_wrk = 1", "unknown field `max_wrk`"),
    ("elvish", "", "key `host.io.handling`: line 7: unknown variant `elvish`, expected one of `vhost`, `es2`, `elvis`, `pmd`"),
    ("vhost", "quota = 4", 'key `host.io.quota`: only for handling = "es2"'),
])
def test_bad_backend_keys_are_input_errors(tmp_path, handling, extra, needle):
    p = tmp_path / "bad.toml"
    p.write_text(head(handling, "shared", extra=extra) + vm(0, "stream"))
    with pytest.raises(E.InputError, match=needle):
        E.kvm_run(str(p), str(tmp_path / "o"))


@pytest.mark.parametrize("steps,needle", [
    ("[{at_s = 0.4, rate = 10}]", r"vm\[0\].load\[0\].steps\[0\].at_s = 0.4: must be in 0..duration_s \(0.3\)"),
    ("[{at_s = 0.1, rate = 10}, {at_s = 0.1, rate = 5}]", "must be after the previous step"),
    ("[{at_s = 0.1, rate = 0}]", r"steps\[0\].rate = 0"),
    ("[{at_s = 0.1, rat = 5}]", "unknown field `rat`"),
])
def test_bad_load_steps_are_input_errors(tmp_path, steps, needle):
    p = tmp_path / "bad.toml"
    p.write_text(head("vhost", "shared") + vm(0, "stream", extra=f"steps = {steps}"))
    with pytest.raises(E.InputError, match=needle):
        E.kvm_run(str(p), str(tmp_path / "o"))


def test_dim_moderation_drives_the_policy_dim_through_its_profiles(tmp_path):
    """kind = "dim": the allowed rate is always one of the rx_eqe profiles' 1e6/usec, and DIM
    (policy `moderation::dim::Dim`, fed at every interrupt) moves between profiles."""
    # A load step (80k/s -> 2k/s) gives DIM's step/park machine a traffic change to react to;
    # a steady stream alone sometimes leaves it parked on one profile for the whole run.
    text = head("vhost", "shared", dur=0.4, extra='[moderation]\nkind = "dim"\nprofiles = "rx_eqe"\n') + vm(
        0, "stream", rate=80000, extra='consume = "irq"\nsteps = [{at_s = 0.2, rate = 2000}]')
    d = run(tmp_path, text)
    rates = {v for _, v in series(d, "vm0.q0.allowed_irq_rate")}
    assert rates <= {1000000, 125000, 15625, 7812, 3906}, rates
    assert len(rates) >= 2, rates
    assert d["counters"]["interrupts_sent"] > 0


def test_bad_dim_keys_are_input_errors(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(head("vhost", "shared", extra='[moderation]\nkind = "dim"\nprofiles = "tx"\n') + vm(0, "stream"))
    with pytest.raises(E.InputError, match='dim.profiles = "tx": allowed: rx_eqe, rx_cqe, tx_eqe, tx_cqe'):
        E.kvm_run(str(p), str(tmp_path / "o"))
