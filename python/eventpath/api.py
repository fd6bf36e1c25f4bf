"""The Python API: run scenarios and get results as plain dicts or DataFrames."""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import math
import numbers
import os
from dataclasses import dataclass
from typing import Any, Callable

from eventpath import _eventpath
from eventpath._eventpath import InputError

# The keys of summary.json's exits_per_s, in contract order: the simulator's own list.
EXIT_REASONS = tuple(_eventpath.exit_reasons())


@dataclass
class Result:
    """One run's results: ``summary`` is the summary.json contract (see docs/summary.md)."""

    summary: dict[str, Any]
    latency_cdf: list[dict[str, Any]]

    # Tidy tables: one observation per row, one variable per column.
    def vm_rows(self) -> list[dict[str, Any]]:
        """One row per VM with the scalar metrics flattened (``throughput_gbps``, ...)."""
        rows = []
        for vm in self.summary["vms"]:
            row: dict[str, Any] = {"scenario": self.summary["scenario"], "seed": self.summary["seed"], "vm": vm["name"]}
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
            {"vm": vm["name"], "reason": r, "exits_per_s": vm["exits_per_s"][r]}
            for vm in self.summary["vms"]
            for r in EXIT_REASONS
        ]

    def pcpu_rows(self) -> list[dict[str, Any]]:
        """One row per pCPU."""
        return [{"pcpu": i, "util_pct": u} for i, u in enumerate(self.summary["host"]["pcpu_util_pct"])]

    def io_thread_rows(self) -> list[dict[str, Any]]:
        """One row per host I/O thread."""
        return list(self.summary["host"]["io_threads"])

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every tidy table by file stem; every row starts with ``scenario`` and ``seed``, so
        that the tables of several runs concatenate."""
        run = {"scenario": self.summary["scenario"], "seed": self.summary["seed"]}
        return {stem: [{**run, **row} for row in rows] for stem, rows in {
            "vms": self.vm_rows(),
            "exits": self.exit_rows(),
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
    res = Result(summary=d["summary"], latency_cdf=d["latency_cdf"])
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


def _overridden(scenario, seed):
    """``scenario`` (path or dict) and ``seed`` with :func:`overriding`'s values applied."""
    profile, values, o_seed = _OVERRIDE.get()
    if not isinstance(scenario, dict):
        import tomllib

        path = _scenario_path(scenario)
        try:
            with open(path, "rb") as f:
                scenario = tomllib.load(f)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            _eventpath.check_file(path)  # raises the simulator's one-line error for the file
            raise
    if scenario.get("profile") != profile:
        return scenario, seed
    sc = copy.deepcopy(scenario)
    own = sc.setdefault("profile_overrides", {})
    for key, v in values.items():
        section, name = key.split(".", 1)
        own.setdefault(section, {}).setdefault(name, v)
    return sc, seed if seed is not None else o_seed


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
    _check_progress(progress)
    routers = _check_routing(routing)
    if isinstance(scenario, dict):
        bad = _non_finite(scenario, "")
        if bad:
            raise InputError(f"scenario <dict>: key `{bad[0]}`: {bad[1]} is not allowed; expected a finite number")
        try:
            text = json.dumps(scenario, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as e:
            raise InputError(f"scenario <dict>: {_one_line(str(e))}; expected TOML-like values "
                             "(str, int, float, bool, list, dict)") from None
        return _result(_eventpath.run_json(text, "<dict>", seed, duration, progress, routers))
    return _result(_eventpath.run_file(scenario, seed, duration, progress, routers))


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


def _one_line(s: str) -> str:
    return " ".join(s.split())


def _short(v: Any) -> str:
    """A value as a one-line message shows it: at most 40 characters."""
    r = _one_line(repr(v))
    return r if len(r) <= 40 else r[:37] + "..."


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
