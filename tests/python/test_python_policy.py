"""Interrupt routers written in Python (issue 29 item 8, docs/python-policy.md): a copy of a
built-in router gives the built-in's summary; a router that raises or answers an invalid vCPU
stops the run with a one-line InputError (exit 2 on the command line) and nothing written."""

import importlib.util
import json

import pytest

import eventpath
from conftest import ROOT
from eventpath import InputError
from eventpath import RouteRequest
from test_input_errors import assert_exit_2_one_line, one_line_error


def _example():
    spec = importlib.util.spec_from_file_location("python_router", ROOT / "examples/python_router.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


EX = _example()


def sc(routing=None, vcpus=2):
    s = EX.scenario(routing)
    s["duration_s"], s["warmup_s"] = 0.02, 0.005
    s["vm"][0]["vcpus"] = vcpus
    s["vm"][0]["vcpu_pins"] = [0] * vcpus
    return s


def same(r):
    """The summary but its wall time and the routing policy's name (a run-time router is
    `external`, the built-in it copies has its own name)."""
    s = {k: v for k, v in r.summary.items() if k != "wall_seconds"}
    s["vms"] = [{k: v for k, v in vm.items() if k != "interrupt_routing"} for vm in s["vms"]]
    return s


class RoundRobin:
    """The built-in lowest_priority_rr, without on_run_state."""

    def __init__(self, n):
        self.n, self.next = n, 0

    def route(self, req):
        if req.kind != "device":
            return req.dest % self.n
        t, self.next = self.next, (self.next + 1) % self.n
        return t


# --- a copy of a built-in router gives the built-in's run ---

@pytest.mark.parametrize("builtin,cls", [("running_first", EX.RunningFirst), ("lowest_priority_rr", RoundRobin)])
def test_a_python_copy_of_a_built_in_router_gives_the_identical_summary(builtin, cls):
    want = eventpath.run(sc(builtin))
    got = eventpath.run(sc(), routing={"vm0": cls})
    assert same(got) == same(want)
    assert got.latency_cdf == want.latency_cdf


def test_the_example_runs_and_asserts_its_copy():
    runs = EX.main(duration=0.02)
    assert same(runs["copy"]) == same(runs["builtin"])


def test_each_run_makes_a_fresh_router_so_runs_repeat():
    made = []

    class Counting(RoundRobin):
        def __init__(self, n):
            super().__init__(n)
            made.append(self)

    a = eventpath.run(sc(), routing={"vm0": Counting}, seed=3)
    b = eventpath.run(sc(), routing={"vm0": Counting}, seed=3)
    assert same(a) == same(b) and len(made) == 2


def test_the_router_hears_run_states_and_device_requests():
    seen = {"states": set(), "kinds": set(), "irqs": set()}

    class Spy(EX.RunningFirst):
        def on_run_state(self, vcpu, state):
            seen["states"].add(state)
            super().on_run_state(vcpu, state)

        def route(self, req):
            seen["kinds"].add(req.kind)
            seen["irqs"].add(req.irq)
            return super().route(req)

    eventpath.run(sc(), routing={"vm0": Spy})
    assert seen["states"] >= {"running", "runnable"} and seen["states"] <= {"running", "runnable", "blocked"}
    assert seen["kinds"] == {"device"} and seen["irqs"]


def test_route_request_can_be_made_by_hand_to_try_a_router():
    r = EX.RunningFirst(2)
    r.on_run_state(1, "running")
    assert r.route(RouteRequest(irq=1, dest=0)) == 1
    assert r.route(RouteRequest(irq=1, dest=0, kind="timer")) == 0
    assert repr(RouteRequest(3, 1)) == 'RouteRequest(irq=3, dest=1, kind="device")'
    assert "kind 'x' is not allowed" in one_line_error(RouteRequest, 0, 0, "x")


# --- a router that fails stops the run ---

class Raises(RoundRobin):
    def route(self, req):
        return 1 // 0


class RaisesLate(RoundRobin):
    """Fails in the measured window, after twenty good answers."""

    calls = 0

    def route(self, req):
        self.calls += 1
        if self.calls > 20:
            raise RuntimeError("no idea\nwhere to go")
        return super().route(req)


class StateRaises(RoundRobin):
    def on_run_state(self, vcpu, state):
        raise KeyError(state)


def answers(value):
    return type("Answers", (RoundRobin,), {"route": lambda self, req: value})


@pytest.mark.parametrize("cls,needle", [
    (Raises, "routing: VM `vm0`: Raises.route(req) raised ZeroDivisionError: integer division or modulo by zero"),
    (RaisesLate, "routing: VM `vm0`: RaisesLate.route(req) raised RuntimeError: no idea where to go"),
    (StateRaises, "routing: VM `vm0`: StateRaises.on_run_state(vcpu, state) raised KeyError: 'runnable'"),
    (answers(2), "Answers.route(req) returned 2 for RouteRequest(irq="),
    (answers(-1), "returned -1 for"),
    (answers(True), "returned True for"),
    (answers(0.0), "returned 0.0 for"),
    (answers("0"), "returned '0' for"),
    (answers(None), "returned None for"),
])
def test_a_router_that_raises_or_answers_an_invalid_vcpu_stops_the_run(cls, needle):
    msg = one_line_error(eventpath.run, sc(), routing={"vm0": cls})
    assert needle in msg, msg
    if "returned" in needle:
        assert msg.endswith("expected a vCPU index of the VM, an int in 0..=1"), msg


def test_the_python_exception_is_the_input_errors_cause():
    with pytest.raises(InputError) as e:
        eventpath.run(sc(), routing={"vm0": Raises})
    assert isinstance(e.value.__cause__, ZeroDivisionError)


# --- a router the run cannot take ---

class Instance(RoundRobin):
    pass


@pytest.mark.parametrize("routing,needle", [
    ({"vm0": Instance(2)}, "routing: vm0 = <test_python_policy.Instance"),
    ({"vm0": Instance(2)}, "(a router object: give its class, so that every run starts from a fresh router)"),
    ({"vm9": RoundRobin}, "routing: no VM named `vm9`; the scenario's VMs are `vm0`"),
    ({0: RoundRobin}, "routing: key 0 is not allowed"),
    ([("vm0", RoundRobin)], "expected a dict {VM name: router class}"),
    ({"vm0": type("NoRoute", (), {"__init__": lambda self, n: None})}, "NoRoute has no method route(req)"),
    ({"vm0": type("Bad", (), {"__init__": lambda self, n: 1 / 0})}, "routing: VM `vm0`: Bad(2) raised ZeroDivisionError"),
    ({"vm0": type("Three", (RoundRobin,), {"n_vcpus": lambda self: 3})}, "routing: VM `vm0` has 2 vCPUs, its router says 3"),
])
def test_a_router_the_run_cannot_take_is_refused_before_it_starts(routing, needle):
    assert needle in one_line_error(eventpath.run, sc(), routing=routing)


def test_a_vm_that_names_its_own_router_or_has_one_vcpu_is_refused():
    msg = one_line_error(eventpath.run, sc("es2"), routing={"vm0": RoundRobin})
    assert msg == ('routing: VM `vm0` sets interrupt_routing = "es2" and is given a router too; '
                   "remove the key or the router")
    assert "VM `vm0` has one vCPU" in one_line_error(eventpath.run, sc(vcpus=1), routing={"vm0": RoundRobin})


# --- the command line: exit 2, nothing written ---

def _write(tmp_path, text, name):
    p = tmp_path / name
    p.write_text(text)
    return p


TOML = """name = "python-router"
profile = "es2"
duration_s = 0.02
warmup_s = 0.005
[host]
pcpus = 2
[[vm]]
name = "vm0"
vcpus = 2
vcpu_pins = [0, 0]
[vm.net]
vhost_pin = 1
[vm.workload]
kind = "udp_receive"
message_bytes = 512
rate_pps = 50000
"""

ROUTERS = """
class Raises:
    def __init__(self, n):
        pass
    def route(self, req):
        raise ValueError("bad idea")

class Nine:
    def __init__(self, n):
        pass
    def route(self, req):
        return 9
"""


@pytest.mark.parametrize("cls,needle", [
    ("Raises", "Raises.route(req) raised ValueError: bad idea"),
    ("Nine", "Nine.route(req) returned 9 for"),
])
def test_cli_run_with_a_failing_python_router_exits_2_and_writes_nothing(cli, tmp_path, cls, needle):
    scf, pol, out = _write(tmp_path, TOML, "sc.toml"), _write(tmp_path, ROUTERS, "pol.py"), tmp_path / "out"
    r = cli("run", str(scf), "--out", str(out), "--no-plots", "--routing", f"vm0={pol}:{cls}")
    assert_exit_2_one_line(r, needle)
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("spec,needle", [
    ("vm0", "expected VM=FILE.py:CLASS"),
    ("vm0={d}/nope.py:X", "no file"),
    ("vm0={d}/pol.py:Missing", "defines no Missing"),
    ("vm0={d}/broken.py:X", "loading {d}/broken.py raised SyntaxError"),
])
def test_cli_routing_spec_errors_exit_2(cli, tmp_path, spec, needle):
    scf = _write(tmp_path, TOML, "sc.toml")
    _write(tmp_path, ROUTERS, "pol.py")
    _write(tmp_path, "def (:\n", "broken.py")
    r = cli("run", str(scf), "--out", str(tmp_path / "out"), "--no-plots", "--routing", spec.format(d=tmp_path))
    assert_exit_2_one_line(r, needle.format(d=tmp_path))
    assert not (tmp_path / "out").exists()


def test_cli_run_with_the_example_router_gives_the_built_in_summary(cli, tmp_path):
    scf = _write(tmp_path, TOML, "sc.toml")
    builtin = _write(tmp_path, TOML.replace("vcpu_pins = [0, 0]", 'vcpu_pins = [0, 0]\ninterrupt_routing = "running_first"'),
                     "builtin.toml")
    r = cli("run", str(scf), "--out", str(tmp_path / "py"), "--no-plots",
            "--routing", f"vm0={ROOT / 'examples/python_router.py'}:RunningFirst")
    assert r.returncode == 0, r.stderr
    r = cli("run", str(builtin), "--out", str(tmp_path / "rs"), "--no-plots")
    assert r.returncode == 0, r.stderr
    py, rs = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("py", "rs"))
    py.pop("wall_seconds"), rs.pop("wall_seconds")
    assert py["vms"][0].pop("interrupt_routing") == "external" and rs["vms"][0].pop("interrupt_routing") == "running_first"
    assert py == rs
