"""``eventpath run`` and ``eventpath trace``: one scenario, one run — its results, records and
figures in a directory, or its timeline in a Chrome trace file.

A run is checked and resolved before anything runs or is removed, so a bad scenario leaves
``--out`` as it was; Ctrl-C keeps what was simulated, marked ``"interrupted": true``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from eventpath import outdir, summary
from eventpath.cli import run_summary
from eventpath.cli.common import EXIT_INTERRUPTED, UsageError, command_line, seconds, seed

# Most events `trace` writes (~100 bytes each).
MAX_TRACE_EVENTS = 100_000_000
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


def add_run(sub) -> None:
    r = sub.add_parser("run", help="run a scenario file")
    r.add_argument("scenario", help="scenario TOML file")
    r.add_argument("--out", required=True, help="output directory (summary.json, *.csv)")
    r.add_argument("--seed", type=seed, help="override the scenario's seed")
    r.add_argument("--duration", type=seconds, help="override the measured simulated seconds")
    r.add_argument("--no-plots", action="store_true", help="write no figures (the tables and summary only; faster)")
    r.add_argument("--routing", action="append", metavar="VM=FILE.py:CLASS",
                   help="route VM's device interrupts with the Python router CLASS of FILE.py instead of its "
                        "interrupt_routing (docs/python-policy.md); once per VM")
    r.set_defaults(fn=cmd_run)


def add_trace(sub) -> None:
    t = sub.add_parser("trace", help="run a scenario and export a timeline (Chrome trace JSON, opens in Perfetto)")
    t.add_argument("scenario", help="scenario TOML file")
    t.add_argument("--out", required=True, help="trace file to write, e.g. trace.json")
    t.add_argument("--from", dest="from_", type=float, default=0.1,
                   help="start of the window, simulated seconds from the start (warm-up included; default 0.1)")
    t.add_argument("--to", type=float, help="end of the window (default: --from + 0.005)")
    t.add_argument("--limit", type=int, default=1_000_000, help="most events written to the file (default 1,000,000; ~100 bytes each)")
    t.add_argument("--seed", type=seed, help="override the scenario's seed")
    t.add_argument("--duration", type=seconds, help="override the measured simulated seconds")
    t.set_defaults(fn=cmd_trace)


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
    out = outdir.writable(a.out)
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
    _write_records(out, resolved, command_line(a, ["run", a.scenario]))
    figs = []
    if not a.no_plots:
        # matplotlib is imported only here: most of a short run's wall time is figure writing.
        from eventpath.plots import run_figures

        figs = run_figures(r, out)
    run_summary.print_summary(r.summary, *run_summary.scenario_facts(a.scenario), exit_rows=r.kvm_exit_rows())
    print(f"wrote {out}/summary.json, tables {', '.join(f'{k}.csv' for k in r.tables())}, "
          f"figures {', '.join(f.name for f in figs) or 'none (--no-plots)'}, "
          f"records {', '.join(RUN_RECORDS)} (eventpath run {out}/scenario.resolved.toml reruns it)")
    if interrupted:
        print(f"eventpath: interrupted: the results cover the {summary.sim_seconds(r.summary):.3g} s of the measured "
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
    out = outdir.file(a.out)
    to = a.to if a.to is not None else a.from_ + 0.005
    # Events go to the file as they are recorded: memory does not grow with --limit.
    _, n, dropped = _eventpath.trace_file(a.scenario, str(out), a.from_, to, a.limit, a.seed, a.duration)
    print(f"wrote {out}: {n:,} events of simulated [{a.from_:g}, {to:g}] s"
          + (f" ({dropped:,} more dropped: raise --limit or narrow the window)" if dropped else "")
          + "; open it in https://ui.perfetto.dev")
    return 0
