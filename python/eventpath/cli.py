"""The ``eventpath`` command line. Bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_PROBE_REFUSED = 3  # `kvm probe`: finished, but the outlier rule refused a parameter (docs/kvm.md)
# Most events `trace` writes (~100 bytes each); most worker processes of `sweep`.
MAX_TRACE_EVENTS = 100_000_000
MAX_WORKERS = 1024
# What `eventpath run` writes into --out (plots.run_figures writes the figures). A run removes
# them all before writing its own, so no file of an earlier run (a figure that a --no-plots run
# does not rewrite) is left beside the new results.
RUN_TABLES = ("vms", "exits", "kvm_exits", "pcpus", "io_threads", "latency_cdf")
RUN_FIGURES = ("exits.png", "latency_cdf.png")
# What a run records so that it can be trusted and re-run: the scenario as it ran (every default
# filled in; `eventpath run` on it gives the same summary.json), the profile as it ran (every
# value with unit and source) and eventpath's version, commit and the command line.
RUN_RECORDS = ("scenario.resolved.toml", "profile.json", "provenance.json")
RUN_FILES = ("summary.json", *(f"{t}.csv" for t in RUN_TABLES), *RUN_FIGURES, *RUN_RECORDS)


class UsageError(Exception):
    """A command-line argument is wrong."""


class _Parser(argparse.ArgumentParser):
    # argparse prints usage plus a message over two lines; we want one clear line.
    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _not_under_a_file(p: str, path: Path, flag: str) -> None:
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{flag} {p}: {parent} is a file, not a directory")
            return


def _out_dir(p: str) -> Path:
    """Create the output directory and make sure files can be written in it."""
    if not p.strip():
        raise UsageError(f"--out {p!r}: not allowed; give a directory (use . for the current one)")
    out = Path(p)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {p}: exists and is not a directory")
    _not_under_a_file(p, out, "--out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        # /proc and read-only mounts accept mkdir of an existing directory but no files.
        with tempfile.NamedTemporaryFile(dir=out, prefix=".eventpath-probe-"):
            pass
    except OSError as e:
        raise UsageError(f"--out {p}: cannot write there ({e.strerror or e})") from None
    return out


def _out_file(p: str, flag: str = "--out") -> Path:
    """A file to write: its directory is created; a directory or an unwritable place is an error."""
    if not p.strip():
        raise UsageError(f"{flag} {p!r}: not allowed; give a file path (e.g. trace.json)")
    out = Path(p)
    if out.is_dir():
        raise UsageError(f"{flag} {p}: is a directory; give the file's path (e.g. trace.json)")
    _not_under_a_file(p, out, flag)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=".eventpath-probe-"):
            pass
        if out.exists() and not os.access(out, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as e:
        raise UsageError(f"{flag} {p}: cannot write there ({e.strerror or e})") from None
    return out


#: Workload kinds whose own metric is packets/s and Gbit/s (a workload that counts operations,
#: memcached, tcp_rr, http, udp_rr, ping, reports ops/s; docs/summary.md ``vms[].throughput``).
PPS_KINDS = ("udp_stream", "udp_receive", "packet_gen", "udp_ping")
GBPS_KINDS = ("tcp_stream", "tcp_receive")
#: docs/summary.md's definitions, printed under the VMs that show them.
EHT_TIG = ("EHT: exit handling time (the direct cost of exits, in the host); TIG: time in guest mode; "
           "both % of measured time x vCPUs")


def _scenario_facts(scenario) -> tuple[list[str | None], list[int]]:
    """The workload kind of each VM (None where it has none) and the dedicated I/O cores
    (``[host.io] cores``) of a scenario file; nothing where it cannot be read."""
    import tomllib

    from eventpath.compare import metrics

    try:
        with open(scenario, "rb") as f:
            sc = tomllib.load(f)
        kinds = [((vm.get("workload") or {}).get("kind") if isinstance(vm, dict) else None) for vm in sc.get("vm") or []]
        return kinds, metrics.io_cores(sc)
    except (OSError, ValueError, TypeError, AttributeError):
        return [], []


def _vm_metric(vm: dict, kind: str | None) -> str:
    """A VM's own metric: pkt/s for UDP streams, Gbit/s for TCP streams, else ops/s where the
    workload counts operations (memcached, tcp_rr, http); webbench's requests/min and failed
    clients, httperf's reply rate and errors, SPECweb's finished requests and response times, a
    CPU job's completion time."""
    tp = vm.get("throughput") or {}
    # webbench and the CPU job report their papers' own metrics (docs/summary.md).
    if vm.get("web") is not None:
        w = vm["web"]
        return f"{_f(w.get('requests_per_min'), 0)} requests/min, {w['failed_clients']} of {w['clients']} clients failed"
    if vm.get("httperf") is not None:
        h = vm["httperf"]
        return f"{_f(h.get('reply_rate_per_s'), 0)} replies/s of {_f(h['rate_rps'], 0)} offered, {h['errors']} errors"
    if vm.get("specweb") is not None:
        w = vm["specweb"]
        return (f"{w['finished_requests']} requests finished ({_f(w.get('requests_per_s'), 1)}/s), "
                f"response time mean {_f(w.get('response_time_mean_ms'), 2)} ms, p95 {_f(w.get('response_time_p95_ms'), 2)} ms")
    if vm.get("cpu_job") is not None:
        j = vm["cpu_job"]
        if j["finished"]:
            return f"CPU job done in {_f(j['completion_ms'], 3)} ms ({_f(j['work_ms'], 3)} ms of work)"
        return f"CPU job not finished: {_f(j['done_pct'], 1)} % of {_f(j['work_ms'], 3)} ms of work done"
    if kind in PPS_KINDS:
        return f"{_f(tp.get('pps'), 0)} pkt/s"
    if kind in GBPS_KINDS:
        return f"{_f(tp.get('gbps'), 3)} Gbit/s"
    if tp.get("ops_per_s") is not None:
        return f"{_f(tp['ops_per_s'], 0)} ops/s"
    if tp.get("gbps") is not None:
        return f"{_f(tp['gbps'], 3)} Gbit/s"
    if tp.get("pps") is not None:
        return f"{_f(tp['pps'], 0)} pkt/s"
    return "no throughput (no network workload)"


def _cpu_line(s: dict, io_cores: list[int]) -> str | None:
    """Host CPU in cores (a pCPU busy the whole window is 1.0) by who burns it; None where the
    summary lacks the per-thread times (a testbed's)."""
    from eventpath.compare.metrics import cpu_split

    try:
        c = cpu_split(s, io_cores)
    except (KeyError, TypeError, ValueError):
        return None
    return (f"host CPU {c['cpu_host']:.2f} cores: vCPUs {c['cpu_vcpus']:.2f} (+ halt polling {c['cpu_halt_poll']:.2f}), "
            f"back-end threads {c['cpu_backend']:.2f}, I/O cores {c['cpu_io_cores']:.2f}, other {c['cpu_other']:.2f}")


#: docs/summary.md's exit time, printed under the exit tables.
EXIT_TIME = ("exit time: the direct handling time of the exits in the hypervisor (perf kvm stat's Time); "
             "'% of exit time' is a reason's share of the VM's, 'in exits' a vCPU's share of measured time; "
             "kvm_exits.csv has every VM, vCPU and reason")


def _exit_lines(vm: str, rows: list[dict]) -> list[str]:
    """``perf kvm stat``-style lines of one VM: exit time by reason, then by vCPU."""
    mine = [r for r in rows if r["vm"] == vm]
    if not mine:
        return []
    by_reason: dict[str, list[float]] = {}
    for r in mine:
        n, t = by_reason.get(r["reason"], [0, 0.0])
        by_reason[r["reason"]] = [n + r["exits"], t + r["time_us"]]
    total = sum(t for _, t in by_reason.values())
    parts = [f"{k} {100 * t / total:.1f} % (avg {t / n:.2f} us)" if total else f"{k} 0 %"
             for k, (n, t) in sorted(by_reason.items(), key=lambda kv: -kv[1][1])]
    vcpus: dict[int, list[float]] = {}
    for r in mine:
        e, p = vcpus.get(r["vcpu"], [0.0, 0.0])
        vcpus[r["vcpu"]] = [e + (r["exits_per_s"] or 0.0), p + (r["vcpu_time_pct"] or 0.0)]
    per = [f"vCPU{v} {e:,.0f}/s, {p:.1f} % in exits" for v, (e, p) in sorted(vcpus.items())]
    return [f"    exit time by reason: {', '.join(parts)}", f"    exits by vCPU: {'; '.join(per)}"]


def _print_summary(s: dict, kinds: list[str | None] | None = None, io_cores: list[int] | None = None,
                   exit_rows: list[dict] | None = None) -> None:
    """A few lines per run; a testbed summary has no seed, profile or event count (null).
    ``kinds``: each VM's workload kind (picks its own metric); ``io_cores``: the dedicated I/O
    cores, which the host CPU line counts apart; ``exit_rows``: :meth:`Result.kvm_exit_rows`
    (the exit time by reason and vCPU lines; none for a testbed's summary)."""
    what = ", ".join(x for x in (s.get("profile") and f"profile {s['profile']}",
                                 s.get("seed") is not None and f"seed {s['seed']}") if x)
    events = f", {s['events']:,} events" if s.get("events") is not None else ""
    print(f"{s['scenario']}: {s['sim_seconds']:.3g} s {'simulated' if s.get('profile') else 'measured'}"
          f"{f' ({what})' if what else ''} in {s['wall_seconds']:.2f} s wall{events}")
    kinds = kinds or []
    for i, vm in enumerate(s["vms"]):
        kind = kinds[i] if i < len(kinds) else None
        ex = {k: v for k, v in vm["exits_per_s"].items() if v}
        parts = ", ".join(f"{k} {v:,.0f}" for k, v in sorted(ex.items(), key=lambda kv: -kv[1]))
        print(f"  {vm['name']}{f' ({kind})' if kind else ''}: {_vm_metric(vm, kind)}")
        print(f"    exits/s {_f(vm['exits_total_per_s'], 0)} ({parts or 'none'})")
        for line in _exit_lines(vm["name"], exit_rows or []):
            print(line)
        print(f"    EHT {_f(vm['eht_pct'])} %, TIG {_f(vm['tig_pct'])} %, kicks/s {_f(vm['kicks_per_s'], 0)}, "
              f"interrupts/s {_f(vm['interrupts_per_s'], 0)}, "
              f"latency p50 {_f(vm['latency_us']['p50'])} us p99 {_f(vm['latency_us']['p99'])} us")
        if vm.get("lookbusy") is not None:
            lb = vm["lookbusy"]
            print(f"    lookbusy {_f(lb.get('util_pct'), 1)} % of its vCPUs' time (asked {_f(lb['target_pct'], 1)} %)")
    cpu = _cpu_line(s, io_cores or []) if s.get("host") else None
    if cpu:
        print(cpu)
    if s["vms"]:
        print(EHT_TIG)
    if exit_rows:
        print(EXIT_TIME)
    for st in s.get("stalled_flows") or []:
        # The liveness watchdog: a stall is a model bug, never a result (docs/model.md).
        print(f"warning: MODEL BUG, not a result: the flow of VM {st['vm']} made no progress from "
              f"{st['stalled_from_s']:.4f} s (seen at {st['detected_s']:.4f} s"
              + (f", recovered at {st['recovered_s']:.4f} s" if st.get("recovered_s") is not None else ", never recovered")
              + f"); please report it with the scenario and seed. State: {st['state']}", file=sys.stderr)


def _f(v, nd: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{nd}f}"


def _write_records(out: Path, resolved: dict, argv: list[str]) -> None:
    """RUN_RECORDS: the resolved scenario, the profile as run, and provenance."""
    import shlex

    from eventpath.version import provenance

    (out / "scenario.resolved.toml").write_text(resolved["toml"])
    (out / "profile.json").write_text(json.dumps(resolved["profile"], indent=2) + "\n")
    (out / "provenance.json").write_text(json.dumps({
        **provenance(), "command": "eventpath " + shlex.join(argv), "argv": argv, "cwd": os.getcwd(),
        "python": sys.version.split()[0],
        "rerun": f"eventpath run {out / 'scenario.resolved.toml'} --out DIR"}, indent=2) + "\n")


def cmd_run(a) -> int:
    from eventpath import api
    from eventpath.tables import write_csv

    from eventpath import policy_file

    routing = policy_file.routers(a.routing)
    out = _out_dir(a.out)
    # Checked and resolved before anything runs or is removed: a bad scenario leaves --out as it was.
    resolved = api.resolve(a.scenario, seed=a.seed, duration=a.duration)
    interrupted = False
    with _progress_bar() as progress:
        try:
            r = api.run(a.scenario, seed=a.seed, duration=a.duration, progress=progress, routing=routing)
        except api.Interrupted as e:
            # Ctrl-C: keep what was simulated, marked as such ("interrupted": true).
            r, interrupted = e.result, True
    for name in RUN_FILES:
        (out / name).unlink(missing_ok=True)
    (out / "summary.json").write_text(json.dumps(r.summary, indent=2) + "\n")
    for stem, rows in r.tables().items():
        write_csv(out / f"{stem}.csv", rows)
    _write_records(out, resolved, getattr(a, "argv", None) or ["run", a.scenario])
    figs = []
    if not a.no_plots:
        # matplotlib is imported only here: most of a short run's wall time is figure writing.
        from eventpath.plots import run_figures

        figs = run_figures(r, out)
    _print_summary(r.summary, *_scenario_facts(a.scenario), exit_rows=r.kvm_exit_rows())
    print(f"wrote {out}/summary.json, tables {', '.join(f'{k}.csv' for k in r.tables())}, "
          f"figures {', '.join(f.name for f in figs) or 'none (--no-plots)'}, "
          f"records {', '.join(RUN_RECORDS)} (eventpath run {out}/scenario.resolved.toml reruns it)")
    if interrupted:
        print(f"eventpath: interrupted: the results cover the {r.summary['sim_seconds']:.3g} s of the measured "
              "window simulated before Ctrl-C (summary.json has \"interrupted\": true)", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


class _progress_bar:
    """A progress bar of simulated seconds on stderr, only when stderr is a terminal; yields the
    callback for :func:`eventpath.run` (None when there is no terminal)."""

    def __enter__(self):
        self.bar = None
        if not sys.stderr.isatty():
            return None
        from tqdm import tqdm

        def progress(now: float, end: float) -> None:
            if self.bar is None:
                # shutil falls back to 80x24 where the terminal reports no size (tqdm would
                # then draw nothing).
                size = shutil.get_terminal_size()
                self.bar = tqdm(total=round(end, 6), unit="s", desc="simulated", leave=False,
                                ncols=min(size.columns, 100), nrows=size.lines,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
            self.bar.n = round(now, 6)
            self.bar.refresh()

        return progress

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


def cmd_trace(a) -> int:
    from eventpath import _eventpath

    if not 1 <= a.limit <= MAX_TRACE_EVENTS:
        raise UsageError(f"--limit {a.limit}: not allowed; expected 1..={MAX_TRACE_EVENTS:,} events "
                         "(each written event takes ~100 bytes of the file)")
    out = _out_file(a.out)
    to = a.to if a.to is not None else a.from_ + 0.005
    # Events go to the file as they are recorded: memory does not grow with --limit.
    _, n, dropped = _eventpath.trace_file(a.scenario, str(out), a.from_, to, a.limit, a.seed, a.duration)
    print(f"wrote {out}: {n:,} events of simulated [{a.from_:g}, {to:g}] s"
          + (f" ({dropped:,} more dropped: raise --limit or narrow the window)" if dropped else "")
          + "; open it in https://ui.perfetto.dev")
    return 0


def cmd_keys(a) -> int:
    import textwrap

    from eventpath import api

    keys = api.keys()
    if a.prefix is not None:
        want = a.prefix.strip()
        keys = [k for k in keys if k["key"] == want or k["key"].startswith(want.rstrip(".") + ".") or k["kind"] == want]
        if not want or not keys:
            tops = sorted({k["key"].split(".")[0] for k in api.keys()})
            kinds = sorted({k["kind"] for k in api.keys() if k["kind"]})
            raise UsageError(f"keys {a.prefix!r}: no scenario key is or starts with that; give a key or section "
                             f"({', '.join(tops)}), or a workload or moderation kind ({', '.join(kinds)})")
    if a.json:
        print(json.dumps(keys, indent=2))
        return 0
    width = max(shutil.get_terminal_size().columns, 60)
    for k in keys:
        kind = f"  [kind = \"{k['kind']}\"]" if k["kind"] else ""
        unit = f", {k['unit']}" if k["unit"] else ""
        default = k["default"] if k["default"].startswith("absent: ") else f"default: {k['default']}"
        print(f"{k['key']}{kind}  {k['type']}{unit}; {default}")
        for line in textwrap.wrap(k["meaning"], width - 4):
            print(f"    {line}")
    return 0


def cmd_profiles(a) -> int:
    from eventpath import api

    if a.name is None:
        for name, desc in api.profiles():
            print(f"{name:8s} {desc}")
        return 0
    _print_profile(api.profile(a.name), full=a.full)
    return 0


#: `profiles NAME`: the widest value column before a longer value pushes the rest of its row right.
PROFILE_VALUE_WIDTH = 12


def _print_profile(p: dict, full: bool = False, width: int | None = None) -> None:
    """Every value of a profile, one row per dotted key: value, unit and source, a free
    parameter's range and prior before its source (like ns-3's PrintAttributes). The source is cut
    to the terminal's width (``...``) unless ``full``, which wraps it whole under its column."""
    import textwrap

    from eventpath import profile_values

    width = width or shutil.get_terminal_size().columns
    rows = [(v.key, profile_values.exact(v.value), v.unit,
             (f"[{profile_values.free_note(v.free)}] " if v.free else "") + v.source)
            for v in profile_values.values(p)]
    head = ("key", "value", "unit", "source")
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    w[1] = min(w[1], PROFILE_VALUE_WIDTH)
    indent = sum(w) + 6  # where the source column starts
    for r in [head, *rows]:
        left = "  ".join(c.ljust(w[i]) for i, c in enumerate(r[:3])) + "  "
        room = max(width - len(left), 24)
        src = r[3]
        if full:
            # A value wider than its column gets its row to itself; the source follows in its column.
            if len(left) > indent and src:
                print(left.rstrip())
                left = " " * indent
            lines = textwrap.wrap(src, max(width - indent, 24)) or [""]
            print((left + lines[0]).rstrip())
            for line in lines[1:]:
                print(" " * indent + line)
        else:
            print((left + (src if len(src) <= room else src[: room - 3] + "...")).rstrip())


def _check_workers(a) -> None:
    """``--workers`` (local processes) and ``--scheduler`` (a Dask cluster's): one or the other."""
    if a.workers is not None and not 1 <= a.workers <= MAX_WORKERS:
        raise UsageError(f"--workers {a.workers}: not allowed; expected 1..={MAX_WORKERS} processes")
    if a.workers is not None and a.scheduler is not None:
        raise UsageError(f"--workers {a.workers} with --scheduler {a.scheduler}: give one; --workers counts this "
                         "machine's processes, a cluster runs as many jobs at once as its workers have threads")


def cmd_reproduce(a) -> int:
    from eventpath import reproduce

    if a.list:
        if a.id is not None and a.id not in reproduce.EXPERIMENTS:
            raise UsageError(f"reproduce --list {a.id}: unknown experiment; known: {', '.join(reproduce.EXPERIMENTS)}")
        for e in reproduce.EXPERIMENTS.values():
            if a.id is None or e.id == a.id:
                print(f"{e.id:22s} {e.title}  [{e.source}]")
        return 0
    if not a.id:
        raise UsageError("reproduce: give an experiment ID or --list")
    if a.out is None:
        raise UsageError("reproduce: --out DIR is required")
    ids = list(reproduce.EXPERIMENTS) if a.id == "all" else [a.id]
    for i in ids:
        if i not in reproduce.EXPERIMENTS:
            raise UsageError(f"reproduce: unknown experiment {i!r}; known: {', '.join(reproduce.EXPERIMENTS)} (or 'all')")
    _check_workers(a)
    _check_duration(a.duration)
    out = _out_dir(a.out)
    docs = []
    if a.seeds is not None and not 1 <= a.seeds <= 64:
        raise UsageError(f"--seeds {a.seeds}: expected 1..=64 seeds per row")
    for i, doc in zip(ids, reproduce.run_many(ids, out, duration=a.duration, workers=a.workers,
                                              scheduler=a.scheduler, seeds=a.seeds, converge=a.converge)):
        reproduce.print_table(doc)
        print(f"wrote {out}/{i}.json and {out}/{i}.png")
        docs.append(doc)
    if len(docs) > 1:
        cards = reproduce.scorecard(docs)
        reproduce.print_scorecard(cards)
        v2 = reproduce.scorecard_v2(docs)
        reproduce.print_scorecard_v2(v2)
        (out / "scorecard.json").write_text(json.dumps({"papers": v2, "profiles": cards}, indent=2) + "\n")
    return 0


def cmd_sensitivity(a) -> int:
    """``eventpath sensitivity EXPERIMENT|all``: what moves each row; each prediction miss
    parametric or structural (python/eventpath/sensitivity.py)."""
    import time

    from eventpath import reproduce, sensitivity

    ids = [i for i, e in reproduce.EXPERIMENTS.items() if e.profile] if a.id == "all" else [a.id]
    for i in ids:
        if i not in reproduce.EXPERIMENTS:
            raise UsageError(f"sensitivity: unknown experiment {i!r}; known: {', '.join(reproduce.EXPERIMENTS)} (or 'all')")
    if a.seeds < 1:
        raise UsageError(f"--seeds {a.seeds}: expected at least 1")
    _check_workers(a)
    _check_duration(a.duration)
    out = _out_dir(a.out)
    t0 = time.monotonic()
    for i in ids:
        doc = sensitivity.analyse(i, a.duration, a.seeds, a.workers, a.scheduler,
                                  progress=lambda s: print(s, file=sys.stderr))
        sensitivity.write(doc, out)
        classes = [d for d in doc["rows"] if "miss_class" in d]
        n_par = sum(d["miss_class"] == "parametric" for d in classes)
        print(f"{i}: {doc['parameters']} ranged parameters, {doc['screened_alone']} screened alone; "
              f"{len(classes)} prediction misses: {n_par} parametric, {len(classes) - n_par} structural "
              f"-> {out}/{i}.sensitivity.json, {i}.tornado.png")
        for d in classes:
            print(f"  {d['config']} / {d['metric']}: {d['miss_class']}: {d['evidence']}")
    print(f"sensitivity: {len(ids)} experiment(s) in {time.monotonic() - t0:.0f} s")
    return 0


def cmd_qos(a) -> int:
    from eventpath import qos

    out = _out_dir(a.out)
    s = qos.search(a.scenario, bound_ms=a.p95_ms, vm=a.vm, lo=a.lo, hi=a.hi, steps=a.steps, duration=a.duration,
                   seed=a.seed, step=lambda label: print(f"  {label}", file=sys.stderr))
    doc = s.as_dict()
    (out / "qos.json").write_text(json.dumps(doc, indent=2) + "\n")
    figs = ""
    if not a.no_plots:
        from eventpath.plots import qos_figure

        qos_figure(doc, out / "qos.png", f"{Path(a.scenario).name}: p95 within {a.p95_ms:g} ms")
        figs = f" and {out}/qos.png"
    for p in s.points:
        if p.liveness != "ok":
            print(f"warning: the run at {p.offered_rps:,.0f} req/s is {p.liveness}, not a result: {p.liveness_reason}; "
                  "it counts as missing the bound", file=sys.stderr)
    if s.peak_rps is None:
        print(f"no rate from {a.lo:g} req/s meets p95 <= {a.p95_ms:g} ms")
    else:
        print(f"peak {s.peak_rps:,.0f} req/s with p95 <= {a.p95_ms:g} ms" + (" (the highest rate tried: raise --hi)" if s.capped else ""))
    print(f"wrote {out}/qos.json{figs}")
    return 0


def cmd_calibrate(a) -> int:
    from eventpath import calibrate

    if a.budget < 1:
        raise UsageError(f"--budget {a.budget}: not allowed; expected at least 1 evaluation")
    _check_workers(a)
    seeds = _seed_list(a.seeds) if a.seeds is not None else [1, 2]
    _check_duration(a.duration)  # before anything is written: a failed start leaves no calibration
    out = _out_dir(a.out)
    command = " ".join(["eventpath calibrate", a.profile, "--budget", str(a.budget), "--seeds",
                        ",".join(map(str, seeds)), "--duration", f"{a.duration:g}"]
                       + (["--targets", a.targets] if a.targets else []))
    try:
        rep = calibrate.calibrate(a.profile, out, budget=a.budget, workers=a.workers, resume=a.resume, seeds=seeds,
                                  duration=a.duration, targets=a.targets, command=command,
                                  scheduler=a.scheduler)
    except KeyboardInterrupt:
        print(f"eventpath: interrupted; finished evaluations are kept in {out}/evals.jsonl: "
              "run the same command with --resume to continue", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"calibrate {a.profile}: objective {rep['objective_before']:.3g} -> {rep['objective_after']:.3g}; "
          f"targets within tolerance {rep['targets_ok_before']} -> {rep['targets_ok_after']} of {len(rep['targets'])} "
          f"({rep['evaluations']} evaluations)")
    for p in rep["parameters"]:
        flags = ("" if p["constrained"] else "  UNCONSTRAINED") + ("  at a bound" if p["at_bound"] else "")
        print(f"  {p['key']:28s} prior {p['prior']:<10.4g} fitted {p['fitted']:<10.4g} "
              f"range {p['range'][0]:g}..{p['range'][1]:g}{flags}")
    for t in rep["targets"]:
        if t["fragile"]:
            print(f"  fragile: {t['experiment']}:{t['config']}/{t['metric']} leaves its tolerance under a ±10 % move")
    print(f"wrote {out}/{a.profile}.toml, {out}/report.json, {out}/report.png")
    if a.apply:
        dest = calibrate.apply(a.profile, out)
        print(f"applied: {dest} (rebuild with `make install` so the built-in profile carries it)")
    return 0


def cmd_sweep(a) -> int:
    from eventpath import sweep

    params = [sweep.parse_param(p) for p in a.param]
    seeds = _seed_list(a.seeds) if a.seeds is not None else None
    _check_workers(a)
    import shlex

    res = sweep.sweep(Path(a.scenario), params, seeds, _out_dir(a.out), workers=a.workers, duration=a.duration,
                      scheduler=a.scheduler, command="eventpath " + shlex.join(getattr(a, "argv", None) or ["sweep"]))
    from eventpath import tables

    if tables.parquet_available():
        print(f"wrote {res} and {res.with_suffix('.parquet')}")
    else:
        print(f"wrote {res} (results.parquet as well with pyarrow: pip install 'eventpath[cluster]')")
    return 0


def cmd_compare(a) -> int:
    import shlex
    import tomllib

    from eventpath import _eventpath, api, compare
    from eventpath.compare import outdir, workloads

    if (a.scenario is None) == (a.workloads is None):
        raise UsageError("compare: give a scenario file, or --profile P --workloads W1,W2,... (not both)")
    if a.workloads is not None and a.profile is None:
        raise UsageError("compare --workloads: give the host's --profile as well (e.g. --profile es2)")
    if a.scenario is not None and a.profile is not None:
        raise UsageError("compare: --profile goes with --workloads; a scenario file names its own profile")
    _check_workers(a)
    if a.top < 1:
        raise UsageError(f"--top {a.top}: not allowed; expected at least 1 row")
    seeds = _seed_list(a.seeds) if a.seeds is not None else list(compare.SEEDS)
    duration = compare.DURATION_S if a.duration is None else a.duration
    warmup = compare.WARMUP_S if a.warmup is None else a.warmup
    _check_duration(duration)
    out = outdir.check(a.out)  # before anything runs: a refused --out leaves nothing behind
    vary = {}
    for spec in a.vary:
        fam, eq, names = spec.partition("=")
        vary[fam.strip()] = [n.strip() for n in names.split(",")] if eq else None
        if eq and not all(vary[fam.strip()]):
            raise UsageError(f"--vary {spec}: an empty name; expected FAMILY or FAMILY=NAME,NAME")
    if a.scenario is not None:
        try:
            with open(a.scenario, "rb") as f:
                sc = tomllib.load(f)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            _eventpath.check_file(a.scenario)  # raises the simulator's one-line error for the file
            raise
        own = (sc.get("duration_s", 1.0), sc.get("warmup_s", 0.1))
        if (a.duration, a.warmup) == (None, None) and own != (duration, warmup):
            print(f"note: each run is {duration:g} s after {warmup:g} s of warm-up, the comparison's default (the "
                  f"scenario says {own[0]:g} s after {own[1]:g} s); --duration and --warmup change it")
        workloads.check_warmup(str(sc.get("profile")), warmup)
        sc.update(duration_s=duration, warmup_s=warmup)
        _eventpath.check_json(json.dumps(sc), a.scenario)
        inputs = {str(sc["name"]): sc}
    else:
        api.profile(a.profile)  # an unknown profile: one line naming the built-in ones
        workloads.check_warmup(a.profile, warmup)
        inputs = workloads.named(a.profile, [w for w in a.workloads.split(",")], duration, warmup)
    compare.compare(inputs, out, seeds=seeds, workers=a.workers, vary=vary, plots=not a.no_plots, top=a.top,
                    command="eventpath compare " + shlex.join(getattr(a, "argv", [])[1:]), scheduler=a.scheduler)
    return 0


def cmd_report(a) -> int:
    import shlex

    from eventpath import report
    from eventpath.report import gather, outdir

    _check_workers(a)
    # Every input is checked before anything runs: a refused report leaves nothing behind.
    out = outdir.check(a.out)
    given = {"compare_dir": gather.check_dir(a.compare_dir, "--compare-dir", "compare.json"),
             "reproduce_dir": gather.check_dir(a.reproduce_dir, "--reproduce-dir", "*.json"),
             "kvm_dir": gather.check_dir(a.kvm_dir, "--kvm-dir", "**/compare.json")}
    report.build(out, quick=a.quick, no_kvm=a.no_kvm, workers=a.workers, scheduler=a.scheduler, **given,
                 command="eventpath report " + shlex.join(getattr(a, "argv", [])[1:]),
                 say=lambda s: print(s, file=sys.stderr))
    print(f"open {out.resolve()}/index.html")
    return 0


def _seed_list(text: str) -> list[int]:
    """``--seeds 1,2,3``: comma-separated integers 0 ≤ seed < 2^64, at least one, no repeats."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise UsageError(f"--seeds {text!r}: not allowed; expected comma-separated integers, e.g. 1,2,3")
    seeds = []
    for p in parts:
        try:
            seeds.append(_seed(p))
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"--seeds {text}: {e}") from None
    if len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds {text}: a seed is given twice; each run of the grid must differ")
    return seeds


def cmd_bench(a) -> int:
    from eventpath import bench

    for flag, v, lo, hi, why in (("--seconds", a.seconds, 1e-3, 3600.0, "simulated seconds of our engine"),
                                 ("--simpy-seconds", a.simpy_seconds, 1e-4, 1.0,
                                  "simulated seconds of SimPy, which runs ~100x slower"),
                                 ("--model-seconds", a.model_seconds, 0.0, 60.0,
                                  "simulated seconds of the full model; 0 skips it")):
        if not lo <= v <= hi:  # also NaN
            raise UsageError(f"{flag} {v:g}: not allowed; expected {lo:g}..={hi:g} ({why})")
    res = bench.run(sim_seconds=a.seconds, simpy_seconds=a.simpy_seconds, model_seconds=a.model_seconds,
                    by_kind=a.by_kind)
    if a.json:
        print(json.dumps(res))
    else:
        bench.print_result(res)
    return 0


def cmd_demo(a) -> int:
    from eventpath import demo

    demo.run(_out_dir(a.out))
    return 0


def cmd_kvm(a) -> int:
    from eventpath import _eventpath

    if a.kvm_cmd == "compare":
        return _kvm_compare(a)
    out = _out_dir(a.out)
    if a.kvm_cmd == "probe":
        text, noise = _probe_shielded(out, a.quick)
        print(text if a.json else f"wrote {out}/probe.json, {out}/profile.toml and {out}/noise.json")
        print(f"noise: {_noise_line(noise)}", file=sys.stderr)
        refused = json.loads(text).get("refused") or {}
        for key, r in refused.items():
            where = "profile.toml keeps es2's value" if r.get("profile_key") else "not exported"
            print(f"warning: refused {key}: {r['reason']} ({where}; see probe.json refused)", file=sys.stderr)
        if refused and not a.allow_outliers:
            return EXIT_PROBE_REFUSED
    else:
        text = _eventpath.kvm_run(a.scenario, str(out))
        _print_summary(json.loads(text), *_scenario_facts(a.scenario))
        print(f"wrote {out}/summary.json")
    return 0


def _probe_shielded(out: Path, quick: bool) -> tuple[str, dict]:
    """``kvm probe`` with its threads shielded from other processes (``kvm_noise.shielded``),
    and the machine's noise beside it in ``out/noise.json``: others' demand before, what they
    took during, steal, load average."""
    from eventpath import _eventpath, kvm_noise

    quiet = kvm_noise.quiet_load()
    before = kvm_noise.sample()
    with kvm_noise.shielded() as shielded:
        text = _eventpath.kvm_probe(str(out), quick)
    noise = {"quiet_cpus": quiet["other_cpus"], **kvm_noise.between(before, kvm_noise.sample()),
             "shield": f"nice {kvm_noise.SHIELD_NICE}" if shielded else "none (no CAP_SYS_NICE)"}
    (out / "noise.json").write_text(json.dumps(noise, indent=2) + "\n")
    return text, noise


def _noise_line(n: dict) -> str:
    f = lambda x, fmt: "?" if x is None else format(x, fmt)  # noqa: E731
    return (f"other processes wanted {f(n['quiet_cpus'], '.2f')} CPUs before and took {f(n['other_cpus'], '.2f')} "
            f"during; steal {f(n['steal_pct'], '.1f')} %; load average {f(n['loadavg_1m'], '.2f')}; "
            f"probe threads {n['shield']}")


def _kvm_compare(a) -> int:
    """Testbed experiments beside their simulator twins (docs/kvm.md, "Simulator twins")."""
    from eventpath import _eventpath, kvm_compare

    ok, why = _eventpath.kvm_available()
    if not ok:
        raise UsageError(f"kvm compare needs a usable /dev/kvm: {why}")
    ids = list(kvm_compare.EXPERIMENTS) if a.experiment == "all" else [a.experiment]
    if ids[0] not in kvm_compare.EXPERIMENTS:
        raise UsageError(f"unknown experiment {a.experiment!r}; expected one of {', '.join(kvm_compare.EXPERIMENTS)} or all")
    if a.repeats < 1:
        raise UsageError(f"--repeats {a.repeats}: expected at least 1")
    out = _out_dir(a.out)
    profile = Path(a.profile) if a.profile else None
    if profile is None:
        print("probing this host (eventpath kvm probe: 5 trials) ...", file=sys.stderr)
        text, noise = _probe_shielded(out / "probe", False)
        print(f"probe noise: {_noise_line(noise)}", file=sys.stderr)
        for key, r in (json.loads(text).get("refused") or {}).items():
            print(f"warning: refused {key}: {r['reason']} (the profile keeps es2's value)", file=sys.stderr)
        profile = out / "probe" / "profile.toml"
    elif not profile.is_file():
        raise UsageError(f"--profile {a.profile}: no such file; give a profile.toml written by eventpath kvm probe")
    docs = []
    for e in ids:
        d = out / e if len(ids) > 1 else out
        doc = kvm_compare.compare(e, d, profile.resolve(), repeats=a.repeats, duration=a.duration,
                                  progress=lambda s: print(s, file=sys.stderr) if a.verbose else None)
        docs.append(doc)
        print(f"{e}: {doc['within_tolerance']} of {doc['judged']} rows within tolerance -> {d}/compare.json, compare.png")
    if len(docs) > 1:
        card = kvm_compare.scorecard(docs)
        (out / "scorecard.txt").write_text(card + "\n")
        print(card)
    return 0


def _check_duration(duration: float | None) -> None:
    """``--duration`` checked as every run checks it, before a command starts anything."""
    if duration is not None:
        from eventpath import _eventpath

        _eventpath.check_duration("--duration", duration)


def _seconds(s: str) -> float:
    """A number of seconds. Its range is checked where it is used: for ``--duration``, once, by
    the simulator, exactly as a scenario's ``duration_s`` is."""
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a number of seconds") from None


def _seed(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"{s} is not allowed; expected 0 ≤ seed < 2^64")
    return v


class _Version(argparse.Action):
    """``--version``: the line is made only when asked for (it runs git)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from eventpath.version import describe

        print(describe())
        parser.exit(0)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="eventpath", description="Simulate, reproduce and measure the virtual I/O event path.")
    p.add_argument("--version", action=_Version, help="print eventpath's version and commit, and exit")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run a scenario file")
    r.add_argument("scenario", help="scenario TOML file")
    r.add_argument("--out", required=True, help="output directory (summary.json, *.csv)")
    r.add_argument("--seed", type=_seed, help="override the scenario's seed")
    r.add_argument("--duration", type=_seconds, help="override the measured simulated seconds")
    r.add_argument("--no-plots", action="store_true", help="write no figures (the tables and summary only; faster)")
    r.add_argument("--routing", action="append", metavar="VM=FILE.py:CLASS",
                   help="route VM's device interrupts with the Python router CLASS of FILE.py instead of its "
                        "interrupt_routing (docs/python-policy.md); once per VM")
    r.set_defaults(fn=cmd_run)

    rp = sub.add_parser("reproduce", help="reproduce a seed experiment (published values beside ours)")
    rp.add_argument("id", nargs="?", help="experiment ID (see --list), or 'all'")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument("--out", help="output directory (ID.json, ID.png)")
    rp.add_argument("--duration", type=_seconds, help="override each run's measured seconds")
    rp.add_argument("--seeds", type=int, help="seeds per row: each row is their mean, with its spread "
                                              "(default: each experiment's own)")
    rp.add_argument("--converge", action="store_true",
                    help="also run twice the seeds and twice each run's length, and mark each row converged "
                         "(both moved it by under a tenth of its tolerance) or not; 4x the runs")
    rp.add_argument("--workers", type=int, help="experiments run at once in separate processes (default: all cores)")
    rp.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                         "the README's 'Sweeps on a cluster')")
    rp.set_defaults(fn=cmd_reproduce)

    se = sub.add_parser("sensitivity", help="which profile values move each reproduction row; each prediction "
                                            "miss parametric or structural")
    se.add_argument("id", help="experiment ID (see reproduce --list), or 'all'")
    se.add_argument("--out", required=True, help="output directory (ID.sensitivity.json, ID.tornado.png; a "
                                                 "reproduce ID.json there gains each miss's class)")
    se.add_argument("--duration", type=_seconds, help="each run's measured seconds (default: the experiment's own)")
    se.add_argument("--seeds", type=int, default=1, help="seeds per evaluation (default 1)")
    se.add_argument("--workers", type=int, help="processes (default: all cores)")
    se.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers")
    se.set_defaults(fn=cmd_sensitivity)

    qs = sub.add_parser("qos", help="peak memcached request rate whose p95 latency stays within a bound (DID §5.7)")
    qs.add_argument("scenario", help="scenario TOML file with a memcached workload")
    qs.add_argument("--out", required=True, help="output directory (qos.json, qos.png)")
    qs.add_argument("--p95-ms", type=float, default=10.0, help="the bound on the 95th percentile (ms; default 10)")
    qs.add_argument("--vm", type=int, default=0, help="index of the VM whose workload is searched (default 0)")
    qs.add_argument("--lo", type=float, default=1_000.0, help="lowest offered rate (req/s; default 1000)")
    qs.add_argument("--hi", type=float, default=1_000_000.0, help="highest offered rate (req/s; default 1e6)")
    qs.add_argument("--steps", type=int, default=8, help="bisection steps (default 8)")
    qs.add_argument("--seed", type=_seed, help="override the scenario's seed")
    qs.add_argument("--duration", type=_seconds, help="override each run's measured seconds")
    qs.add_argument("--no-plots", action="store_true", help="write no figure")
    qs.set_defaults(fn=cmd_qos)

    c = sub.add_parser("calibrate", help="fit a profile's free parameters to its calibration targets")
    c.add_argument("profile", help="built-in profile (es2, elvis, did)")
    c.add_argument("--out", required=True, help="output directory (PROFILE.toml, report.json, report.png, evals.jsonl)")
    c.add_argument("--budget", type=int, default=60, help="simulator evaluations of the optimizer (default 60)")
    c.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    c.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                         "the README's 'Sweeps on a cluster')")
    c.add_argument("--resume", action="store_true", help="continue the calibration in --out")
    c.add_argument("--seeds", help="seeds averaged per evaluation (default 1,2)")
    c.add_argument("--duration", type=_seconds, default=0.3,
                   help="simulated seconds per run while fitting (default 0.3; before/after use each experiment's own)")
    c.add_argument("--targets", help="calibration targets file (default: the profile's built-in one)")
    c.add_argument("--apply", action="store_true", help="write the fitted profile over the built-in one (source checkout)")
    c.set_defaults(fn=cmd_calibrate)

    sw = sub.add_parser("sweep", help="run a grid of scenario variants in parallel, resumable")
    sw.add_argument("scenario", help="base scenario TOML file")
    sw.add_argument("--param", action="append", default=[], metavar="KEY=V1,V2",
                    help="dotted key and values (TOML literals; lists and inline tables keep their commas), "
                         "e.g. vm.0.workload.rate_pps=10000,20000 or host.io.cores=[14,15],[13]; vm.*.KEY sets "
                         "KEY on every VM (repeatable)")
    sw.add_argument("--seeds", help="comma-separated seeds (default: the scenario's)")
    sw.add_argument("--out", required=True, help="output directory (results.csv, runs/)")
    sw.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    sw.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                         "the README's 'Sweeps on a cluster')")
    sw.add_argument("--duration", type=_seconds, help="override each run's measured seconds")
    sw.set_defaults(fn=cmd_sweep)

    cp = sub.add_parser("compare", help="every mechanism combination head to head on a scenario or named workloads")
    cp.add_argument("scenario", nargs="?", help="scenario TOML file (or give --profile and --workloads)")
    cp.add_argument("--profile", help="the host the named --workloads run on (built-in name or path)")
    cp.add_argument("--workloads", help="comma-separated workload kinds, e.g. tcp_stream,tcp_receive,memcached,tcp_rr; "
                    "kind:key=value sets a parameter")
    cp.add_argument("--out", required=True, help="output directory (compare.json, ranked.csv, ranked.parquet, cells.csv, "
                    "pareto.png)")
    cp.add_argument("--seeds", help="comma-separated seeds per cell (default 1,2,3)")
    cp.add_argument("--duration", type=_seconds, help="measured simulated seconds of each run (default 0.02)")
    cp.add_argument("--warmup", type=_seconds, help="simulated warm-up seconds of each run (default 0.01)")
    cp.add_argument("--vary", action="append", default=[], metavar="FAMILY[=NAME,...]",
                    help="vary only this mechanism family, or only these of its mechanisms (repeatable; default: "
                         "every family: delivery, handling, moderation, routing, halt_poll)")
    cp.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    cp.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                         "the README's 'Sweeps on a cluster')")
    cp.add_argument("--top", type=int, default=10, help="best rows printed per workload (default 10; the CSV has all)")
    cp.add_argument("--no-plots", action="store_true", help="write no figure")
    cp.set_defaults(fn=cmd_compare)

    rep = sub.add_parser("report", help="one static HTML site: scorecard, every reproduction's figure, the head "
                         "to head, the testbed comparison and every profile value")
    rep.add_argument("--out", required=True, help="output directory (index.html and the other pages)")
    rep.add_argument("--quick", action="store_true",
                     help="shorten every run and the head to head (docs/report.md): a smoke test of the site, "
                          "not results")
    rep.add_argument("--no-kvm", action="store_true", help="no testbed comparison even where /dev/kvm is usable")
    rep.add_argument("--compare-dir", help="show this earlier `eventpath compare --out` instead of running one")
    rep.add_argument("--reproduce-dir", help="show this earlier `eventpath reproduce all --out` instead of running it")
    rep.add_argument("--kvm-dir", help="show this earlier `eventpath kvm compare --out` instead of running it")
    rep.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    rep.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                         "the README's 'Sweeps on a cluster')")
    rep.set_defaults(fn=cmd_report)

    t = sub.add_parser("trace", help="run a scenario and export a timeline (Chrome trace JSON, opens in Perfetto)")
    t.add_argument("scenario", help="scenario TOML file")
    t.add_argument("--out", required=True, help="trace file to write, e.g. trace.json")
    t.add_argument("--from", dest="from_", type=float, default=0.1,
                   help="start of the window, simulated seconds from the start (warm-up included; default 0.1)")
    t.add_argument("--to", type=float, help="end of the window (default: --from + 0.005)")
    t.add_argument("--limit", type=int, default=1_000_000, help="most events written to the file (default 1,000,000; ~100 bytes each)")
    t.add_argument("--seed", type=_seed, help="override the scenario's seed")
    t.add_argument("--duration", type=_seconds, help="override the measured simulated seconds")
    t.set_defaults(fn=cmd_trace)

    ky = sub.add_parser("keys", help="every scenario key with its type, unit, default and meaning")
    ky.add_argument("prefix", nargs="?", help="only this key, section (host.io, vm.net) or workload / moderation "
                    "kind (memcached, air)")
    ky.add_argument("--json", action="store_true", help="print a JSON list")
    ky.set_defaults(fn=cmd_keys)

    pr = sub.add_parser("profiles", help="list the built-in profiles, or every value of one with unit and source")
    pr.add_argument("name", nargs="?", help="a built-in profile (or a profile .toml): print every value with its "
                    "unit, free range and source")
    pr.add_argument("--full", action="store_true", help="whole sources, wrapped (default: cut to the terminal width)")
    pr.set_defaults(fn=cmd_profiles)

    b = sub.add_parser("bench", help="engine events/s vs a SimPy model of the same event path, and the full model's")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--seconds", type=_seconds, default=1.0, help="simulated seconds for our engine")
    b.add_argument("--simpy-seconds", type=_seconds, default=0.01, help="simulated seconds for SimPy")
    b.add_argument("--model-seconds", type=_seconds, default=0.2,
                   help="simulated seconds of the full model (14 VMs x TCP on elvis); 0 skips it")
    b.add_argument("--by-kind", action="store_true",
                   help="also count the full model's events by kind, per delivered packet (one more run)")
    b.set_defaults(fn=cmd_bench)

    d = sub.add_parser("demo", help="run the default scenario at several rates: table + figure")
    d.add_argument("--out", default="out/demo", help="output directory")
    d.set_defaults(fn=cmd_demo)

    k = sub.add_parser("kvm", help="the real KVM testbed")
    ks = k.add_subparsers(dest="kvm_cmd", required=True, parser_class=_Parser)
    kp = ks.add_parser("probe", help="measure this host's primitive costs; write probe.json and profile.toml")
    kp.add_argument("--out", required=True)
    kp.add_argument("--quick", action="store_true", help="shorter runs, 3 trials instead of 5")
    kp.add_argument("--json", action="store_true", help="print probe.json")
    kp.add_argument("--allow-outliers", action="store_true",
                    help="exit 0 even if the outlier rule refused a parameter (it is still not written into "
                         "profile.toml); without it such a run exits 3")
    kc = ks.add_parser("compare", help="run a testbed experiment and its simulator twin; compare.json + compare.png")
    kc.add_argument("experiment", help="exp1 .. exp5, or all (then a scorecard)")
    kc.add_argument("--out", required=True)
    kc.add_argument("--profile", help="a profile.toml from eventpath kvm probe (default: probe now, 5 trials)")
    kc.add_argument("--repeats", type=int, default=3, help="testbed runs per point (default 3)")
    kc.add_argument("--duration", type=_seconds, help="seconds per run (default: each experiment's own)")
    kc.add_argument("--verbose", action="store_true", help="print each run as it finishes")
    kr = ks.add_parser("run", help="run a testbed scenario")
    kr.add_argument("scenario")
    kr.add_argument("--out", required=True)
    k.set_defaults(fn=cmd_kvm)
    return p


# A value argparse would take for an option: `-inf`, `-1e5`, `-.5`, `-nan`.
_NEGATIVE = re.compile(r"-(\d|\.\d|inf|infinity|nan)", re.IGNORECASE)


def _value_options(p: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``p`` and its subcommands that takes a value."""
    out: set[str] = set()
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for sub in act.choices.values():
                out |= _value_options(sub)
        elif act.option_strings and act.nargs != 0:
            out.update(act.option_strings)
    return out


def _negatives_as_values(p: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--duration -inf`` as ``--duration=-inf``: argparse reads a value that starts with '-'
    and is not a plain negative number as another option ("expected one argument"); joined, the
    value reaches its check, which names what is allowed."""
    opts, out, i = _value_options(p), [], 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    from eventpath._eventpath import InputError

    try:
        p = parser()
        a = p.parse_args(_negatives_as_values(p, sys.argv[1:] if argv is None else argv))
        a.argv = list(sys.argv[1:] if argv is None else argv)
        return a.fn(a)
    except (UsageError, InputError) as e:
        print(f"eventpath: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("eventpath: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except BaseException as e:  # a Rust panic arrives as pyo3's PanicException (a BaseException)
        if isinstance(e, SystemExit):
            raise
        if os.environ.get("EVENTPATH_DEBUG"):
            raise
        print(f"eventpath: internal error: {type(e).__name__}: {e} (set EVENTPATH_DEBUG=1 for a trace; please report)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
