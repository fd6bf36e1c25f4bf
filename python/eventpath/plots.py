"""Figures of runs, sweeps, QoS searches and calibrations (a reproduction's figure is
``eventpath.reproduce.figure``'s, the testbed comparison's ``eventpath.comparison``'s); every
colour that names a configuration or an exit reason is ``eventpath.palette``'s."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from eventpath import palette, summary  # noqa: E402


# Most labelled series a legend lists; most bars whose labels are written under them.
MAX_LEGEND = 12
MAX_TICK_LABELS = 40


def _finish(fig, ax, path: Path, title: str, grid: bool = False) -> None:
    """Title, legend (when something is labelled: a run too short to complete anything has
    nothing to draw), layout, write the PNG and free the figure."""
    if grid:
        ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=9)
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        ax.text(0.5, 0.5, "nothing measured", transform=ax.transAxes, ha="center", va="center", color="gray")
    elif len(handles) <= MAX_LEGEND:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def exit_breakdown_figure(labels: list[str], exits: list[dict], path: Path, title: str) -> None:
    """Stacked bars of exits/s by reason, one bar per run (ES2 Fig. 4 style)."""
    reasons = [r for r in exits[0] if any((e.get(r) or 0) > 0 for e in exits)] if exits else []
    n = len(labels)
    # Width grows with the bars up to a page; beyond MAX_TICK_LABELS bars only every k-th is named.
    fig, ax = plt.subplots(figsize=(min(1.2 + 1.1 * n, 16.0), 3.6))
    x = list(range(n))
    bottom = [0.0] * n
    for reason in reasons:
        vals = [(e.get(reason) or 0) / 1000 for e in exits]
        ax.bar(x, vals, bottom=bottom, label=reason, color=palette.exit_color(reason))
        bottom = [b + v for b, v in zip(bottom, vals)]
    step = max(1, -(-n // MAX_TICK_LABELS))
    ax.set_xticks(x[::step], labels[::step], fontsize=8 if n <= 12 else 6, rotation=0 if n <= 12 else 90)
    ax.set_ylabel("VM exits (K/s)")
    _finish(fig, ax, path, title)


def latency_cdf_figure(curves: dict[str, list[tuple[float, float]]], path: Path, title: str) -> None:
    """Latency CDFs, one curve per label: points are (latency µs, fraction ≤)."""
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    for i, (label, pts) in enumerate(curves.items()):
        if pts and i < MAX_LEGEND * 4:  # more curves than that are unreadable anyway
            # Start the curve at 0 so that even a one-bucket distribution shows its step.
            xs, ys = zip(*([(pts[0][0], 0.0)] + list(pts)))
            ax.step(xs, ys, where="post", label=label)
    if len(curves) > MAX_LEGEND * 4:
        title = f"{title} (first {MAX_LEGEND * 4} of {len(curves)})"
    if any(pts for pts in curves.values()):
        ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.01)
    _finish(fig, ax, path, title, grid=True)


def qos_figure(search: dict, path: Path, title: str) -> None:
    """A QoS search's runs: 95th-percentile latency against the offered rate, the bound dashed."""
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    pts = sorted((p["offered_rps"], p["p95_us"] / 1e3) for p in search["points"] if p["p95_us"] is not None)
    if pts:
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label="p95")
        ax.axhline(search["bound_ms"], linestyle="--", color="gray", label=f"bound {search['bound_ms']:g} ms")
        if search["peak_rps"]:
            ax.axvline(search["peak_rps"], linestyle=":", color="green", label=f"peak {search['peak_rps']:,.0f}/s")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("offered requests/s")
    ax.set_ylabel("p95 latency (ms)")
    _finish(fig, ax, path, title, grid=True)


def run_figures(result, out: Path) -> list[Path]:
    """The figures `eventpath run` writes beside summary.json: exits by reason per VM and the
    latency CDF of each VM."""
    s = result.summary
    paths = [out / "exits.png", out / "latency_cdf.png"]
    vms = summary.vms(s)
    exit_breakdown_figure([summary.name(vm) for vm in vms], [summary.exits_by_reason(vm) for vm in vms], paths[0],
                          f"{summary.scenario(s)}: VM exits by reason")
    curves: dict[str, list[tuple[float, float]]] = {}
    for p in result.latency_cdf:
        curves.setdefault(p["vm"], []).append((p["latency_us"], p["cdf"]))
    latency_cdf_figure(curves, paths[1], f"{summary.scenario(s)}: workload latency")
    return paths


def calibration_figure(report: dict, path: Path) -> None:
    """Each calibration target's miss (in tolerances) before and after the fit; the band is the
    reproduction bar. Fragile targets are starred."""
    ts = report["targets"]
    labels = [f"{t['experiment']}:{t['config']}/{t['metric']}" + (" *" if t["fragile"] else "") for t in ts]
    clip = lambda e: max(min(e, 4.0), -4.0) if e is not None else 0.0  # noqa: E731
    fig, ax = plt.subplots(figsize=(8.0, 1.6 + 0.28 * len(ts) + 0.15 * len(report["parameters"])))
    y = list(range(len(ts)))
    ax.axvspan(-1, 1, color=palette.TOLERANCE, alpha=0.12, label="within tolerance")
    ax.barh([i + 0.2 for i in y], [clip(t["before"]["miss"]) for t in ts], 0.4, color=palette.PRIOR, label="prior")
    ax.barh([i - 0.2 for i in y], [clip(t["after"]["miss"]) for t in ts], 0.4, color=palette.SIMULATED,
            label="calibrated")
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(-4, 4)
    ax.set_xlabel("miss in tolerances (rates: 1 = 25 %, percentages: 1 = 10 points; clipped at 4)", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    fit = "\n".join(f"{p['key']} = {p['fitted']:.4g} (prior {p['prior']:.4g})" for p in report["parameters"])
    ax.set_title(f"calibrate {report['profile']}: objective {report['objective_before']:.3g} -> "
                 f"{report['objective_after']:.3g}\n{fit}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
