"""A reproduction's figure in its paper's form (issue 29 item 3): what a reader takes in at a
glance is the shape of the paper's figure with the published values on it.

The experiment's :class:`~eventpath.reproduce.experiment.Axis` places each row: on a *sweep*
(a number on the paper's x-axis: VMs, packet rate) the rows are lines, one per configuration;
otherwise they are grouped bars (a group per message kind, or a bar per configuration). Rows of
VM exits or exit shares by reason (``exits_eoi``, ``share_eoi``) that are bars are gathered into
one panel whose bars are the reasons, as ES2 Fig. 4 and Table 1 show them. Every colour is
:mod:`eventpath.palette`'s. A published value is a diamond with whiskers over its tolerance
band — the scorecard's own (:func:`eventpath.comparison.published_tolerance`: ±10 points for a
percentage, ±25 % for a rate) — and a row the paper gives no number for has no marker at all.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from eventpath import palette
from eventpath.comparison import published_tolerance
from eventpath.reproduce.experiment import EXPERIMENTS, Axis

#: Panels per row; the size of one panel (inches).
COLUMNS = 3
PANEL_W, PANEL_H = 4.2, 3.0
#: Characters per line of a tick label (longer names wrap).
TICK_WRAP = 14

_REASON = re.compile(r"(exits|share)_(\w+)")
_REASON_TITLE = {"exits": "VM exits by reason", "share": "share of exits by reason"}


@dataclass
class Placed:
    """A row where the axis puts it: ``x`` a number (a sweep), a group's name, or None."""

    row: dict
    facet: str | None
    series: str
    x: float | str | None


@dataclass
class Panel:
    kind: str  # "lines", "bars" or "reasons"
    title: str
    unit: str
    points: list[Placed]
    new_row: bool = False
    #: Columns it spans (many bars need the width).
    span: int = 1


def place(rows: list[dict], axis: Axis | None) -> list[Placed]:
    """Each row with its facet, series and x (a config the pattern does not match: a
    configuration of its own, x None)."""
    pat = re.compile(axis.pattern) if axis else None
    out = []
    for r in rows:
        m = pat.fullmatch(r["config"]) if pat else None
        if not m:
            out.append(Placed(r, None, r["config"], None))
            continue
        g = m.groupdict()
        x: float | str = g["x"]
        try:
            x = float(x)
        except ValueError:
            pass
        out.append(Placed(r, g.get("facet"), g["series"], x))
    return out


def _reason(metric: str) -> tuple[str, str] | None:
    m = _REASON.fullmatch(metric)
    return (m[1], m[2]) if m and m[2] in palette.EXIT_REASONS else None


def panels(placed: list[Placed]) -> list[Panel]:
    """The panels of a figure, in the order of the rows: per facet the sweep's metrics, then the
    reasons panels and the bars."""
    lines: dict[tuple, list[Placed]] = {}
    reasons: dict[tuple, list[Placed]] = {}
    bars: dict[tuple, list[Placed]] = {}
    for p in placed:
        metric, unit = p.row["metric"], p.row["unit"]
        if isinstance(p.x, float):
            lines.setdefault((p.facet, metric, unit), []).append(p)
        elif _reason(metric):
            reasons.setdefault((_reason(metric)[0], unit, p.x), []).append(p)
        else:
            bars.setdefault((metric, unit), []).append(p)
    # One reason alone is no breakdown: it is an ordinary bar panel.
    for key, ps in list(reasons.items()):
        if len({_reason(p.row["metric"])[1] for p in ps}) < 2:
            del reasons[key]
            for p in ps:
                bars.setdefault((p.row["metric"], p.row["unit"]), []).append(p)
    out, facet = [], object()
    for (f, metric, unit), ps in lines.items():
        out.append(Panel("lines", f"{f} · {metric}" if f else metric, unit, ps, new_row=f != facet))
        facet = f
    # The bars start below the sweep's panels.
    rest = [Panel("reasons", _REASON_TITLE[prefix] + (f" · {group}" if group else ""), unit, ps,
                  span=min(COLUMNS, 1 + len(ps) // 7)) for (prefix, unit, group), ps in reasons.items()]
    rest += [Panel("bars", metric, unit, ps) for (metric, unit), ps in bars.items()]
    if rest:
        rest[0].new_row = True
    return out + rest


def _band(row: dict) -> tuple[float, float, float]:
    """The published value and its whiskers' lengths below and above."""
    pub = row["published"]
    lo, hi = published_tolerance(row["unit"]).band(pub)
    return pub, pub - lo, hi - pub


def _published(ax, x: float, row: dict, color: str = "white") -> None:
    """The published value as a diamond (white on a bar, the series' colour on a line) with
    whiskers over its tolerance band."""
    if row["published"] is None:
        return
    pub, below, above = _band(row)
    ax.errorbar([x], [pub], yerr=[[below], [above]], fmt="D", ms=5, mfc=color, mec=palette.PUBLISHED_EDGE,
                ecolor=palette.PUBLISHED_EDGE, elinewidth=0.9, capsize=3, zorder=4)


def _value(v) -> float:
    return math.nan if v is None else float(v)


def _draw_lines(ax, panel: Panel, xlabel: str) -> None:
    series: dict[str, list[Placed]] = {}
    for p in panel.points:
        series.setdefault(p.series, []).append(p)
    for name, ps in series.items():
        ps = sorted(ps, key=lambda p: p.x)
        c = palette.config_color(name)
        ax.plot([p.x for p in ps], [_value(p.row["simulated"]) for p in ps], "-o", ms=3.5, lw=1.5, color=c)
        for p in ps:
            _published(ax, p.x, p.row, c)
    xs = sorted({p.x for p in panel.points})
    ax.set_xticks(xs, [f"{x:g}" for x in xs], fontsize=7)
    ax.set_xlabel(xlabel, fontsize=8)


def _grouped(ax, groups: list, members: list, bar: dict) -> None:
    """Bars of ``members`` side by side in each of ``groups``; ``bar[(group, member)]`` is the
    row and its colour."""
    width = 0.8 / len(members)
    for gi, g in enumerate(groups):
        present = [m for m in members if (g, m) in bar]
        for k, m in enumerate(present):
            x = gi - 0.4 + width * (k + 0.5 + (len(members) - len(present)) / 2)
            row, color = bar[(g, m)]
            if row["simulated"] is not None:
                ax.bar([x], [row["simulated"]], width * 0.92, color=color)
            _published(ax, x, row)
    many = len(groups) > 6
    ax.set_xticks(range(len(groups)), [textwrap.fill(str(g), TICK_WRAP) for g in groups],
                  fontsize=6 if many else 7, rotation=30 if many else 0, ha="right" if many else "center")
    ax.set_xlim(-0.6, len(groups) - 0.4)


def _draw_bars(ax, panel: Panel) -> None:
    """A group of bars per x name, a bar per configuration in it; a row without a group (every
    row of an experiment without an axis) is a bar of its own, named under it."""
    members = list(dict.fromkeys(p.series for p in panel.points if p.x is not None)) or [None]
    groups, bar = [], {}
    for p in panel.points:
        g, m = (p.x, p.series) if p.x is not None else (p.series, members[0])
        groups.append(g)
        bar[(g, m)] = (p.row, palette.config_color(p.series))
    _grouped(ax, list(dict.fromkeys(groups)), members, bar)


def _draw_reasons(ax, panel: Panel) -> None:
    """A group per configuration, a bar per exit reason in it (ES2 Fig. 4, Table 1)."""
    configs = list(dict.fromkeys(p.series for p in panel.points))
    reasons = [r for r in palette.EXIT_REASONS if any(_reason(p.row["metric"])[1] == r for p in panel.points)]
    bar = {}
    for p in panel.points:
        r = _reason(p.row["metric"])[1]
        bar[(p.series, r)] = (p.row, palette.exit_color(r))
    _grouped(ax, configs, reasons, bar)


def draw(doc: dict, path: Path, axis: Axis | None = None) -> None:
    """Draw reproduction ``doc`` (``ID.json``'s contract) to ``path``; ``axis`` defaults to its
    experiment's."""
    from eventpath.plots import plt

    if axis is None and doc["id"] in EXPERIMENTS:
        axis = EXPERIMENTS[doc["id"]].axis
    ps = panels(place(doc["rows"], axis))
    cells, nrows = _layout(ps)
    fig = plt.figure(figsize=(PANEL_W * COLUMNS, PANEL_H * nrows + 1.3), layout="constrained")
    grid = fig.add_gridspec(nrows, COLUMNS)
    for p, (r, c, span) in zip(ps, cells):
        ax = fig.add_subplot(grid[r, c:c + span])
        if p.kind == "lines":
            _draw_lines(ax, p, axis.xlabel if axis else "")
        elif p.kind == "reasons":
            _draw_reasons(ax, p)
        else:
            _draw_bars(ax, p)
        ax.set_title(textwrap.shorten(p.title, 60), fontsize=9)
        ax.set_ylabel(p.unit, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.yaxis.set_major_formatter(_short)
        ax.grid(axis="y", alpha=0.3)
        if all(q.row["simulated"] is None and q.row["published"] is None for q in p.points):
            ax.text(0.5, 0.5, "no value", transform=ax.transAxes, ha="center", color="gray")
        elif all(v >= 0 for q in p.points for v in (q.row["simulated"], q.row["published"]) if v is not None):
            ax.set_ylim(bottom=0)
    _legend(fig, ps)
    title = textwrap.fill(f"{doc['id']}: {doc['title']}", int(PANEL_W * COLUMNS * 11))
    fig.suptitle(f"{title}\n{doc['source']}", fontsize=9)
    if (mark := stamp(doc)) is not None:
        # Across the panels, where it cannot be cropped away from the bars.
        fig.text(0.5, 0.5, mark, ha="center", va="center", fontsize=20, color="tab:red", alpha=0.25, rotation=20)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def stamp(doc: dict) -> str | None:
    """The mark across a figure whose runs were shortened (``reproduce --duration``, the
    report's ``--quick``): its numbers are not the experiment's result. None at its own length."""
    if doc.get("duration") is None:
        return None
    return f"every run shortened to {doc['duration']:g} s:\nnot the experiment's result"


def _short(v: float, _pos=None) -> str:
    """A tick value in a few characters: 120K, 1.5M (matplotlib's 1e6 offset would sit on the
    panel's title)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def _layout(ps: list[Panel]) -> tuple[list[tuple[int, int, int]], int]:
    """(row, column, columns spanned) of each panel, and the rows."""
    cells, row, col = [], -1, COLUMNS
    for p in ps:
        span = p.span
        if p.new_row or col + span > COLUMNS:
            row, col = row + 1, 0
        cells.append((row, col, span))
        col += span
    return cells, max(row + 1, 1)


def _legend(fig, ps: list[Panel]) -> None:
    """One legend for the figure: the configurations (where colour names them), the exit reasons
    and the published marker."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = {}
    for p in ps:
        if p.kind == "lines" or (p.kind == "bars" and any(q.x is not None for q in p.points)):
            for q in p.points:
                if q.x is not None:
                    handles.setdefault(q.series, Patch(color=palette.config_color(q.series)))
    shown = {_reason(q.row["metric"])[1] for p in ps if p.kind == "reasons" for q in p.points}
    for r in palette.EXIT_REASONS:
        if r in shown:
            handles[f"exit: {r}"] = Patch(color=palette.exit_color(r))
    if any(q.row["published"] is not None for p in ps for q in p.points):
        handles["published, whiskers = tolerance (±25 % rates, ±10 points %)"] = Line2D(
            [], [], marker="D", ls="none", mfc="white", mec=palette.PUBLISHED_EDGE)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(len(handles), 6),
                   fontsize=8, frameon=False)
