"""The Python API: run scenarios and get results as plain dicts or DataFrames."""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from eventpath import _eventpath, args, summary
from eventpath._eventpath import InputError
from eventpath.args import one_line as _one_line, short as _short

# The keys of summary.json's exits_per_s, in contract order: the simulator's own list.
EXIT_REASONS = tuple(_eventpath.exit_reasons())


@dataclass
class Result:
    """One run's results: ``summary`` is the summary.json contract (see docs/summary.md)."""

    summary: dict[str, Any]
    latency_cdf: list[dict[str, Any]]
    #: Exits of the measured window by VM, vCPU and reason (reasons without exits left out):
    #: ``{"vm", "vcpu", "reason", "count", "time_ns"}``; see :meth:`kvm_exit_rows`.
    exit_stats: list[dict[str, Any]] = field(default_factory=list)

    # Tidy tables: one observation per row, one variable per column.
    def vm_rows(self) -> list[dict[str, Any]]:
        """One row per VM with the scalar metrics flattened (``throughput_gbps``, ...)."""
        rows = []
        for vm in summary.vms(self.summary):
            row: dict[str, Any] = {"scenario": summary.scenario(self.summary), "seed": summary.seed(self.summary),
                                   "vm": summary.name(vm)}
            for k, v in vm.items():
                if k == "name" or k == "exits_per_s":
                    continue
                if isinstance(v, dict):
                    row.update({f"{k}_{kk}": vv for kk, vv in v.items()})
                else:
                    row[k] = v
            rows.append(row)
        return rows

    def exit_rows(self) -> list[dict[str, Any]]:
        """One row per (VM, exit reason)."""
        return [
            {"vm": summary.name(vm), "reason": r, "exits_per_s": summary.exits_per_s(vm, r)}
            for vm in summary.vms(self.summary)
            for r in EXIT_REASONS
        ]

    def kvm_exit_rows(self) -> list[dict[str, Any]]:
        """``perf kvm stat``'s table: one row per (VM, vCPU, exit reason) with exits, their rate,
        their direct handling time in the hypervisor (µs in the measured window, and per exit),
        and the reason's shares of the vCPU's exits and exit time (%). The handling times of a
        VM add up to its ``eht_pct`` of (measured time x vCPUs)."""
        secs = summary.sim_seconds(self.summary)
        totals: dict[tuple[str, int], tuple[int, int]] = {}
        for r in self.exit_stats:
            n, t = totals.get((r["vm"], r["vcpu"]), (0, 0))
            totals[(r["vm"], r["vcpu"])] = (n + r["count"], t + r["time_ns"])
        rows = []
        for r in self.exit_stats:
            n, t = totals[(r["vm"], r["vcpu"])]
            rows.append({"vm": r["vm"], "vcpu": r["vcpu"], "reason": r["reason"], "exits": r["count"],
                         "exits_per_s": r["count"] / secs if secs > 0 else None,
                         "exits_pct": 100.0 * r["count"] / n if n else None,
                         "time_us": r["time_ns"] / 1e3,
                         "time_pct": 100.0 * r["time_ns"] / t if t else None,
                         "avg_us": r["time_ns"] / 1e3 / r["count"] if r["count"] else None,
                         "vcpu_time_pct": 100.0 * r["time_ns"] / (secs * 1e9) if secs > 0 else None})
        return rows

    def pcpu_rows(self) -> list[dict[str, Any]]:
        """One row per pCPU."""
        return [{"pcpu": i, "util_pct": u} for i, u in enumerate(summary.pcpu_util_pct(self.summary))]

    def io_thread_rows(self) -> list[dict[str, Any]]:
        """One row per host I/O thread."""
        return list(summary.io_threads(self.summary))

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every tidy table by file stem; every row starts with ``scenario`` and ``seed``, so
        that the tables of several runs concatenate."""
        run = {"scenario": summary.scenario(self.summary), "seed": summary.seed(self.summary)}
        return {stem: [{**run, **row} for row in rows] for stem, rows in {
            "vms": self.vm_rows(),
            "exits": self.exit_rows(),
            "kvm_exits": self.kvm_exit_rows(),
            "pcpus": self.pcpu_rows(),
            "io_threads": self.io_thread_rows(),
            "latency_cdf": self.latency_cdf,
        }.items()}

    def frames(self):  # pragma: no cover - thin pandas wrapper
        """The tidy tables as pandas DataFrames (needs the ``frames`` extra: pandas)."""
        from eventpath.extras import need

        pd = need("pandas", "frames", "Result.frames()")

        return {k: pd.DataFrame(v) for k, v in self.tables().items()}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run. ``result`` holds what was simulated: its summary covers the part
    of the measured window that ran and has ``"interrupted": true``."""

    def __init__(self, result: "Result | None" = None):
        super().__init__("interrupted")
        self.result = result


def _result(text: str) -> Result:
    d = json.loads(text)
    res = Result(summary=d["summary"], latency_cdf=d["latency_cdf"], exit_stats=d.get("exit_stats", []))
    if d.get("interrupted"):
        raise Interrupted(res)
    return res


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int in 0..2^64, or None; anything else is an :class:`InputError`."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise InputError(f"{name}: {_short(seed)} is not allowed; expected an integer 0 ≤ seed < 2^64")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise InputError(f"{name}: {_short(seed)} is not allowed; expected an integer 0 ≤ seed < 2^64")
    return seed


def check_duration(duration: Any, name: str = "duration") -> float | None:
    """``duration`` as a float, or None. Its range is checked once, by the simulator, for
    scenario files, dicts and the command line alike."""
    if duration is None:
        return None
    if isinstance(duration, bool) or not isinstance(duration, numbers.Real):
        raise InputError(f"{name}: {_short(duration)} is not allowed; expected seconds (a number)")
    try:
        return float(duration)
    except OverflowError:
        raise InputError(f"{name}: {_short(duration)} is not allowed; expected seconds in 1e-6..=86400") from None


#: Set by :func:`overriding`: (profile name, {dotted key: value}, seed or None). A context
#: variable, so that threads (a Dask worker runs several jobs at once) each see their own.
_OVERRIDE: contextvars.ContextVar[tuple[str, dict[str, float], int | None] | None] = contextvars.ContextVar(
    "eventpath_override", default=None)


@contextlib.contextmanager
def overriding(profile: str, values: dict[str, float], seed: int | None = None):
    """Within the block, every :func:`run` of a scenario on built-in ``profile`` takes ``values``
    (dotted keys, ``exit.eoi_ns``) as profile overrides, under the scenario's own ones, and
    ``seed`` unless the call gives one. This is how ``eventpath calibrate`` runs the
    reproductions at a candidate point; scenarios on other profiles run as given. Bad
    arguments raise :class:`InputError` here; a value out of its range, at the run."""
    if not isinstance(profile, str):
        raise InputError(f"overriding: profile {_short(profile)} is not allowed; expected a profile name (str)")
    if not isinstance(values, dict):
        raise InputError(f"overriding: values {_short(values)} is not allowed; expected a dict of "
                         "{'section.key': number}, e.g. {'exit.eoi_ns': 1500}")
    for key, v in values.items():
        if not isinstance(key, str) or key.count(".") != 1 or not all(key.split(".")):
            raise InputError(f"overriding: key {_short(key)} is not allowed; expected a profile parameter as "
                             "'section.key', e.g. 'exit.eoi_ns'")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise InputError(f"overriding: {key} = {_short(v)} is not allowed; expected a finite number in the "
                             "parameter's unit")
    seed = check_seed(seed)
    token = _OVERRIDE.set((profile, dict(values), seed))
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


#: Set by :func:`varied`: (seed offset, duration scale). An ensemble's member ``k`` of a
#: reproduction runs every scenario at its own seed + k, and a convergence check at twice each
#: scenario's own duration, without the experiments knowing.
_VARIED: contextvars.ContextVar[tuple[int, float]] = contextvars.ContextVar("eventpath_varied", default=(0, 1.0))

#: A scenario's seed and measured duration when it does not give them (the simulator's defaults).
DEFAULT_SEED, DEFAULT_DURATION_S = 1, 1.0


@contextlib.contextmanager
def varied(seed_offset: int = 0, duration_scale: float = 1.0):
    """Within the block, every :func:`run` whose call gives no seed runs at its scenario's seed
    + ``seed_offset`` (a seed set by :func:`overriding` wins), and every run lasts
    ``duration_scale`` x its duration (the call's, else the scenario's). How ``eventpath
    reproduce --seeds`` runs an ensemble and ``--converge`` a run twice as long."""
    if isinstance(seed_offset, bool) or not isinstance(seed_offset, numbers.Integral) or seed_offset < 0:
        raise InputError(f"varied: seed_offset {_short(seed_offset)} is not allowed; expected an integer >= 0")
    if isinstance(duration_scale, bool) or not isinstance(duration_scale, numbers.Real) \
            or not (math.isfinite(duration_scale) and duration_scale > 0):
        raise InputError(f"varied: duration_scale {_short(duration_scale)} is not allowed; expected a positive number")
    token = _VARIED.set((int(seed_offset), float(duration_scale)))
    try:
        yield
    finally:
        _VARIED.reset(token)


def _varied(scenario, seed, duration):
    """``seed`` and ``duration`` with :func:`varied`'s offset and scale applied."""
    offset, scale = _VARIED.get()
    if offset == 0 and scale == 1.0:
        return seed, duration
    sc = scenario_dict(scenario)
    if seed is None and offset:
        own = sc.get("seed", DEFAULT_SEED)
        seed = (own if isinstance(own, int) and not isinstance(own, bool) else DEFAULT_SEED) + offset
    if scale != 1.0:
        own = duration if duration is not None else sc.get("duration_s", DEFAULT_DURATION_S)
        if isinstance(own, numbers.Real) and not isinstance(own, bool):
            duration = float(own) * scale
    return seed, duration


def _overridden(scenario, seed):
    """``scenario`` (path or dict) and ``seed`` with :func:`overriding`'s values applied."""
    profile, values, o_seed = _OVERRIDE.get()
    scenario = scenario_dict(scenario)
    if scenario.get("profile") != profile:
        return scenario, seed
    sc = copy.deepcopy(scenario)
    own = sc.setdefault("profile_overrides", {})
    for key, v in values.items():
        section, name = key.split(".", 1)
        # A scenario's own malformed table is left as written: the run refuses it by its key.
        if isinstance(own, dict) and isinstance(own.setdefault(section, {}), dict):
            own[section].setdefault(name, v)
    return sc, seed if seed is not None else o_seed


#: Set by :func:`memo`: finished runs by what they ran (None: no memo).
_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("eventpath_memo", default=None)


@contextlib.contextmanager
def memo():
    """Within the block, a :func:`run` of exactly what an earlier one in it ran — the same
    scenario text (a dict's JSON or a file's bytes) after :func:`overriding` and :func:`varied`,
    at the same seed and duration, without ``progress`` or ``routing`` — returns a fresh copy of
    that run's result instead of running it again. The simulator is deterministic, so the
    answer is the one the run would give: ``eventpath calibrate`` evaluates a point over every
    experiment on its profile, and experiments that repeat another's baseline runs (elvis-fig4
    holds elvis-fig8's) then simulate each once. A copy's ``wall_seconds`` is the first run's.
    Nested blocks share the outer one's memo."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _memoized(key: tuple, run_text: Callable[[], str]) -> Result:
    """``run_text()``'s result, or a copy of the one the memo holds under ``key``."""
    memo_ = _MEMO.get()
    if memo_ is None:
        return _result(run_text())
    text = memo_.get(key)
    if text is None:
        text = run_text()
        res = _result(text)  # raises Interrupted before anything is kept
        memo_[key] = text
        return res
    return _result(text)


def run(scenario: str | os.PathLike | dict, *, seed: int | None = None, duration: float | None = None,
        progress: Callable[[float, float], Any] | None = None,
        routing: dict[str, Callable[[int], Any]] | None = None) -> Result:
    """Run a scenario: a path to a TOML file, or a dict with the same structure.

    ``progress(simulated_s, end_s)``, if given, is called every ~25 ms of wall time (warm-up
    included in both). ``routing``, if given, maps VM names to interrupt routers written in
    Python: a class called with the VM's vCPU count, whose instances have the Rust router's
    methods, ``route(req)`` and optionally ``on_run_state(vcpu, state)`` and ``n_vcpus()``
    (docs/python-policy.md); it replaces the VM's ``interrupt_routing``, which must be left out.
    Raises :class:`InputError` (a ``ValueError``) with a one-line message on bad input — a
    Python router that raises or answers anything but a vCPU of its VM included: the run stops
    and returns nothing — and :class:`Interrupted` (a ``KeyboardInterrupt`` carrying the
    partial result) on Ctrl-C.
    """
    if not isinstance(scenario, dict):
        scenario = _scenario_path(scenario)
    if _OVERRIDE.get() is not None:
        scenario, seed = _overridden(scenario, seed)
    seed = check_seed(seed)
    duration = check_duration(duration)
    seed, duration = _varied(scenario, seed, duration)
    _check_progress(progress)
    routers = _check_routing(routing)
    if progress is not None or routers:
        if isinstance(scenario, dict):
            return _result(_eventpath.run_json(_dict_text(scenario), "<dict>", seed, duration, progress, routers))
        return _result(_eventpath.run_file(scenario, seed, duration, progress, routers))
    if isinstance(scenario, dict):
        text = _dict_text(scenario)
        return _memoized(("<dict>", text, seed, duration),
                         lambda: _eventpath.run_json(text, "<dict>", seed, duration, None, routers))
    if _MEMO.get() is None:
        return _result(_eventpath.run_file(scenario, seed, duration, None, routers))
    try:
        body = Path(scenario).read_bytes()
    except OSError:  # the simulator says what is wrong with the path
        body = None
    return _memoized((scenario, body, seed, duration),
                     lambda: _eventpath.run_file(scenario, seed, duration, None, routers))


def _dict_text(scenario: dict) -> str:
    """A scenario dict as the JSON text the simulator reads; a value JSON cannot carry is an
    :class:`InputError`."""
    bad = _non_finite(scenario, "")
    if bad:
        raise InputError(f"scenario <dict>: key `{bad[0]}`: {bad[1]} is not allowed; expected a finite number")
    try:
        return json.dumps(scenario, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise InputError(f"scenario <dict>: {_one_line(str(e))}; expected TOML-like values "
                         "(str, int, float, bool, list, dict)") from None


def resolve(scenario: str | os.PathLike | dict, *, seed: int | None = None,
            duration: float | None = None) -> dict[str, Any]:
    """The scenario as :func:`run` would run it, checked, with every default filled in:
    ``{"scenario": dict (runs as given), "toml": the same as a scenario file, "profile": the
    profile as run (its ``[profile_overrides]`` applied), every value with unit and source}``.
    Raises :class:`InputError` where :func:`run` would."""
    seed, duration = check_seed(seed), check_duration(duration)
    if isinstance(scenario, dict):
        return json.loads(_eventpath.resolve_json(_dict_text(scenario), "<dict>", seed, duration))
    return json.loads(_eventpath.resolve_file(_scenario_path(scenario), seed, duration))


@dataclass
class Trace:
    """What :func:`trace` wrote: the trace file, its events, the events past ``limit`` that
    were dropped, and the run's :class:`Result`."""

    path: Path
    events: int
    dropped: int
    result: Result


#: Most events :func:`trace` writes (~100 bytes each).
MAX_TRACE_EVENTS = 100_000_000


def trace(scenario: str | os.PathLike | dict, out: str | os.PathLike, *, from_s: float = 0.1,
          to_s: float | None = None, limit: int = 1_000_000, seed: int | None = None,
          duration: float | None = None) -> Trace:
    """Run a scenario (a path or a dict) and write the timeline of simulated seconds
    [``from_s``, ``to_s``] (default ``from_s`` + 0.005; warm-up included) to the file ``out``
    as Chrome trace-event JSON (opens in https://ui.perfetto.dev), at most ``limit`` events."""
    out = args.path(out, "trace", "out", "the trace file to write")
    for name, v in (("from_s", from_s), ("to_s", to_s)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v)):
            raise InputError(f"trace: {name} {_short(v)} is not allowed; expected simulated seconds (a number)")
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or not 1 <= limit <= MAX_TRACE_EVENTS:
        raise InputError(f"trace: limit {_short(limit)} is not allowed; expected 1..={MAX_TRACE_EVENTS:,} events")
    path = Path(out)
    if path.is_dir():
        raise InputError(f"trace: out {path}: is a directory; give the trace file's path (e.g. trace.json)")
    seed, duration = check_seed(seed), check_duration(duration)
    to = float(to_s) if to_s is not None else float(from_s) + 0.005
    if isinstance(scenario, dict):
        text, n, dropped = _eventpath.trace_json(_dict_text(scenario), str(path), float(from_s), to, int(limit), seed,
                                                 duration)
    else:
        text, n, dropped = _eventpath.trace_file(_scenario_path(scenario), str(path), float(from_s), to, int(limit),
                                                 seed, duration)
    return Trace(path=path, events=n, dropped=dropped, result=_result(text))


def keys() -> list[dict[str, str]]:
    """Every scenario key: ``{"key", "kind", "type", "unit", "default", "meaning"}``, ``kind``
    naming the workload or moderation scheme a key belongs to (empty for the others)."""
    return json.loads(_eventpath.scenario_keys())


def scenario_dict(scenario: str | os.PathLike | dict) -> dict:
    """A scenario argument as a dict: a dict as given, a file read as TOML. An argument that
    is neither, or a file that cannot be read or is not TOML (not UTF-8 included), is an
    :class:`InputError` with the simulator's one line for it."""
    if isinstance(scenario, dict):
        return scenario
    import tomllib

    path = _scenario_path(scenario)
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        _eventpath.check_file(path)  # raises the simulator's one-line error for the file
        raise


def _scenario_path(scenario: Any) -> str:
    """A scenario argument that is not a dict, as the path of a file; anything else (TOML text
    given as a string included: pass ``tomllib.loads(text)``, a dict) is an :class:`InputError`."""
    if not isinstance(scenario, (str, bytes, os.PathLike)):
        raise InputError(f"scenario: {type(scenario).__name__} {_one_line(repr(scenario))[:60]} is not allowed; "
                         "expected a path to a TOML file or a dict")
    path = os.fsdecode(scenario)
    if "\n" in path:
        raise InputError(f"scenario: a string of {len(path.splitlines())} lines is not a file path; expected a path "
                         "to a TOML file or a dict (for TOML text, pass tomllib.loads(text))")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"cannot read scenario {path!r}: the path is not valid UTF-8") from None
    return path


def _check_progress(progress: Any) -> None:
    """``progress`` must be None or callable with (simulated_s, end_s)."""
    if progress is None:
        return
    want = "expected a callable(simulated_s, end_s)"
    if not callable(progress):
        raise InputError(f"progress: {_short(progress)} is not allowed; {want}")
    import inspect

    try:
        sig = inspect.signature(progress)
    except (TypeError, ValueError):  # a builtin without a signature: called as it is
        return
    try:
        sig.bind(0.0, 0.0)
    except TypeError as e:
        raise InputError(f"progress: {getattr(progress, '__name__', type(progress).__name__)}{sig} is not allowed "
                         f"({e}); {want}") from None


def _check_routing(routing: Any) -> list[tuple[str, Callable[[int], Any]]]:
    """``routing`` as (VM name, router class) pairs; the simulator checks the VMs."""
    if routing is None:
        return []
    want = "expected a dict {VM name: router class}, e.g. {'vm0': MyRouter}"
    if not isinstance(routing, dict):
        raise InputError(f"routing: {_short(routing)} is not allowed; {want}")
    for vm, factory in routing.items():
        if not isinstance(vm, str):
            raise InputError(f"routing: key {_short(vm)} is not allowed; {want}")
        if not callable(factory):
            fresh = (" (a router object: give its class, so that every run starts from a fresh router)"
                     if hasattr(factory, "route") else "")
            raise InputError(f"routing: {vm} = {_short(factory)} is not allowed{fresh}; expected a class (or "
                             "callable) that makes the VM's router from its vCPU count")
    return list(routing.items())


def _non_finite(v: Any, path: str, depth: int = 0) -> tuple[str, float] | None:
    """The first NaN or infinity in a dict scenario (JSON cannot carry them): (key path, value)."""
    if isinstance(v, float) and not math.isfinite(v):
        return path, v
    if depth > 64:  # deeper is no scenario; json.dumps reports the recursion
        return None
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        found = _non_finite(x, f"{path}[{k}]" if isinstance(k, int) else (f"{path}.{k}" if path else str(k)), depth + 1)
        if found:
            return found
    return None


def profiles() -> list[tuple[str, str]]:
    """Built-in profiles as (name, one-line description)."""
    return _eventpath.profiles()


def profile(name: str | os.PathLike) -> dict[str, Any]:
    """A profile (built-in name or path): every parameter with value, unit and source."""
    if not isinstance(name, (str, os.PathLike)):
        raise InputError(f"profile: {_short(name)} is not allowed; expected a built-in profile name "
                         f"({', '.join(n for n, _ in profiles())}) or a path to a .toml file")
    return json.loads(_eventpath.profile_json(os.fspath(name)))
