"""The Pareto figure: what each distinct result buys (throughput, tail latency) for the host CPU
it burns; the frontier — no other cell is better on both — drawn and named."""

from __future__ import annotations

from pathlib import Path

from eventpath import palette
from eventpath.compare.rank import Row

#: Frontier points named on the figure, and the longest name (the rest are in the CSV): more
#: would overlap.
MAX_NAMED = 6
MAX_LABEL = 60


def frontier(points: list[tuple[float, float, Row]], higher_is_better: bool) -> list[tuple[float, float, Row]]:
    """The points no other point beats on both host CPU (less) and the metric, by host CPU."""
    out, best = [], None
    for x, y, r in sorted(points, key=lambda p: (p[0], -p[1] if higher_is_better else p[1])):
        if best is None or (y > best if higher_is_better else y < best):
            out.append((x, y, r))
            best = y
    return out


def _panel(ax, rows: list[Row], metric: str, higher: bool, ylabel: str) -> None:
    pts = [(r.mean["cpu_host"], r.mean[metric], r) for r in rows if r.mean.get(metric) is not None]
    if not pts:
        ax.text(0.5, 0.5, "not measured by this workload", transform=ax.transAxes, ha="center", color="gray")
        ax.set_axis_off()
        return
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=8, color=palette.OTHER_POINT, label="a distinct result")
    front = frontier(pts, higher)
    ax.plot([p[0] for p in front], [p[1] for p in front], "-o", ms=4, color=palette.FRONTIER, label="Pareto frontier")
    step = max(1, -(-len(front) // MAX_NAMED))
    for k, (x, y, r) in enumerate(front[::step]):
        # Alternate above and below the point: neighbours on a flat frontier do not overprint.
        text = r.label if len(r.label) <= MAX_LABEL else r.label[:MAX_LABEL - 1] + "…"
        ax.annotate(text, (x, y), fontsize=5, xytext=(3, 4 if k % 2 == 0 else -8), textcoords="offset points")
    base = [p for p in pts if p[2].is_baseline]
    if base:
        ax.scatter([base[0][0]], [base[0][1]], marker="*", s=90, color=palette.BASELINE_MARK, zorder=3,
                   label="as given")
    ax.set_xlabel("host CPU (cores)", fontsize=7)
    ax.set_ylabel(ylabel, fontsize=7)
    ax.tick_params(labelsize=6)
    ax.grid(alpha=0.3)


def pareto(ranked: dict[str, list[Row]], path: Path) -> None:
    """One column per workload: throughput against host CPU above, p99 latency below."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(ranked)
    fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 7.0), squeeze=False)
    for j, (w, rows) in enumerate(ranked.items()):
        unit = rows[0].mean["throughput_unit"] if rows else ""
        _panel(axes[0][j], rows, "throughput", True, f"throughput ({unit})")
        _panel(axes[1][j], rows, "p99_us", False, "p99 latency (µs)")
        axes[0][j].set_title(w, fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
