"""The ranked table on the terminal: the best rows, the baseline, and the best row of every
mechanism that ran, so that each one the seams offer is on the page (the CSV has every row)."""

from __future__ import annotations

from typing import Callable

from eventpath.compare.rank import Row

#: Where the reproduction flags come from. The repository stores no verdicts per mechanism
#: (``eventpath reproduce all`` writes a scorecard per profile and role into its --out), so the
#: table says so rather than flag anything.
REPRO_FLAGS = "no scorecard"


def _num(v, digits: int = 0) -> str:
    """A number with ``digits`` decimals below 100 and none above (``-`` where there is none)."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.{digits}f}"


def _tp(r: Row) -> str:
    unit = r.mean["throughput_unit"]
    # Whole ops/s; Gbit/s to two decimals, four below 1 (a starved stream is not "0.00").
    d = 0 if unit == "ops/s" else 2 if r.mean["throughput"] >= 1 else 4
    spread = (r.hi["throughput"] - r.lo["throughput"]) / 2
    return f"{r.mean['throughput']:,.{d}f} ±{spread:,.{d}f}"


def _vs(r: Row, metric: str) -> str:
    """The change from the baseline, shown only beyond the seeds' spread ("~": within it)."""
    if r.is_baseline:
        return "baseline"
    d = r.vs_base.get(metric)
    if d is None:
        return ""
    return f"{d[0]:+.1f} %" if d[1] else "~"


def _line(r: Row, mark: str = "") -> str:
    m = r.mean
    cpu = (f"{m['cpu_host']:.2f} = {m['cpu_vcpus']:.2f}+{m['cpu_halt_poll']:.2f}+{m['cpu_backend']:.2f}"
           f"+{m['cpu_io_cores']:.2f}")
    same = "" if r.spelled_out else f" (+{len(r.members) - 1} identical)"
    if r.is_baseline:
        mark += "as given = "
    return (f"{r.rank:>5} {_tp(r):>20} {_vs(r, 'throughput'):>9} {_num(m['p99_us'], 1):>8} {_num(m['p999_us'], 1):>8} "
            f"{_vs(r, 'p99_us'):>9} {_num(m['exits_per_s']):>9} {_num(m['tig_pct'], 1):>6} {cpu:>26} {_vs(r, 'cpu_host'):>9}  "
            f"{mark}{r.label}{same}")


HEADER = (f"{'rank':>5} {'throughput ±spread':>20} {'vs base':>9} {'p99 us':>8} {'p99.9 us':>8} {'vs base':>9} "
          f"{'exits/s':>9} {'TIG %':>6} {'host CPU = vCPU+halt+back+io':>26} {'vs base':>9}  ")


#: Unranked cells listed one by one on the terminal (cells.csv and compare.json hold them all).
UNRANKED_SHOWN = 5


def print_workload(workload: str, families: list[str], ranked: list[Row], best: dict[tuple[str, str], Row],
                   refused: dict[str, list[str]], unranked: list[tuple[str, str, str]], cells: int, top: int,
                   out: Callable[[str], None] = print) -> None:
    """One workload's table: ``families`` name the label's parts, ``best`` is each mechanism's
    best row, ``refused`` maps a reason to the cells refused for it, ``unranked`` lists the
    cells with a run that is not a result as (label, liveness status, reason)."""
    unit = ranked[0].mean["throughput_unit"] if ranked else "-"
    n_ref = sum(len(v) for v in refused.values())
    counts = {st: sum(1 for _, s, _ in unranked if s == st) for st in dict.fromkeys(s for _, s, _ in unranked)}
    out(f"\n{workload}: throughput in {unit}; {cells - n_ref - len(unranked)} cells ran, {len(ranked)} distinct "
        f"results, {n_ref} refused by the checker"
        + "".join(f", {n} {st.upper()} (not ranked)" for st, n in counts.items()))
    out(HEADER + " · ".join(families))
    shown = set()
    for r in ranked[:top]:
        out(_line(r))
        shown.add(r.rank)
    extra = sorted({r.rank: r for r in [*best.values(), *(r for r in ranked if r.is_baseline)]
                    if r.rank not in shown}.items())
    if extra:
        out("  ... best row of each mechanism not above, and the baseline:")
        for _, r in extra:
            names = sorted(f"{f}={n}" for (f, n), b in best.items() if b is r)
            out(_line(r) + (f"   [best for {', '.join(names)}]" if names else ""))
    for reason, labels in refused.items():
        out(f"  refused ({len(labels)} cells, e.g. {labels[0]}): {reason}")
    for label, status, reason in unranked[:UNRANKED_SHOWN]:
        out(f"  {status.upper()}, not ranked: {label}: {reason}")
    if len(unranked) > UNRANKED_SHOWN:
        out(f"  ... {len(unranked) - UNRANKED_SHOWN} more cells not ranked: cells.csv and compare.json list them all")


def print_footer(out: Callable[[str], None] = print) -> None:
    out("\nvs base: change from the scenario as given, shown where the seeds' ranges do not overlap (~: within "
        "the seed-to-seed spread). host CPU in cores: vCPUs running (guest + exits) + halt polling + back-end "
        "threads on shared cores + dedicated I/O cores. TIG: time in guest mode, % of vCPU time. "
        f"Reproduction flags: {REPRO_FLAGS} (the repository stores no per-mechanism verdicts).")
