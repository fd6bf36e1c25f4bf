"""``eventpath sensitivity``: which profile values move each row of a reproduction, and whether a
prediction's miss is *parametric* or *structural* (issue 47).

**Screening: group screening, then one-at-a-time at the range's ends** (not a Morris design: the
ranges are wide and the model is piecewise, so elementary effects at random points would mostly
sample flat regions; the ends are where a value inside its range can move a row most). Every
parameter with a plausible range (``range = {min, max, why}``, or a free parameter's ``free``)
is screened; a value declared ``exact`` (a count of the testbed, a constant of its kernel's code)
is not. First the parameters are split, in the profile's order, into groups of
:data:`GROUP` and each group is run with all its members at their low ends and at their high
ends (two runs a group): a group that moves no row of the experiment by :data:`NEGLIGIBLE` of a
tolerance is dropped whole — its members cannot move anything alone either, unless their effects
cancel exactly, which the report would miss (said here, not hidden). Each member of the other
groups is then run alone at each end. A row's *effect* of a value is how far it moves the row, in
the row's own tolerance (``reproduce.ensemble.moved``, signed: + moves it up). **Noise:** the
base is also run on :data:`NOISE_BASES` other seed sets; a row's largest move between them is its
noise, and a value's move counts only above it (a run at other values is a different event order,
so at one seed every value "moves" every row a little). A miss whose gap to its tolerance is
within its noise stays **unclassified** (more seeds or a longer run can classify it).

**Detail**: for each row, the :data:`TOP` values that move it most, with their effects at both
ends (the tornado figure draws them).

**Verdict on each prediction miss**: the values whose ends move the row toward its published
value, the strongest first, are applied together (the first one, two, ... up to :data:`COMBINE`)
in one run each. If a combination brings the row within its tolerance while every calibration row
of the experiment stays within its own, the miss is **parametric** (the values are listed); if
none does, **structural**: no value inside its range, alone or with the strongest others, reaches
it, and the values that move it least of all point at the behaviour that is missing. Only the
experiment's own calibration rows are held (the profile's other experiments are not run): a
parametric verdict is necessary, not sufficient, for a fit to reach the row.

**Calibration misses are classed the same way** (issue 47: each calibration miss parametric or
structural with its evidence): a baseline's row that a combination of ranged values brings within
tolerance with the experiment's other baselines held is parametric — a refit that frees those
values (``calibrate`` frees only the declared free parameters) could reach it; one that no value
reaches, or only by breaking the other baselines, is structural. A calibration row is never
*fitted* here: the verdict says what a fit could do, and the profile is not changed.

Outputs (``--out DIR``): ``ID.sensitivity.json`` and ``ID.tornado.png`` per experiment; a doc of
``eventpath reproduce`` in the same directory (``ID.json``) gains each miss's ``miss_class``, so
``reproduce``'s scorecard v2 counts the classes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from eventpath import _eventpath
from eventpath._eventpath import InputError

#: Parameters screened together in the group stage.
GROUP = 8
#: A move below this many tolerances is no move.
NEGLIGIBLE = 0.05
#: Values reported per row.
TOP = 10
#: Most values combined to reach a miss's published value.
COMBINE = 5
#: Extra base runs on other seeds, whose moves from the first are each row's noise.
NOISE_BASES = 2


def ranged_params(profile: str) -> list[dict]:
    """Every parameter of ``profile`` with a range: ``{key, value, lo, hi, why, free}``."""
    from eventpath import profile_values

    out = []
    for v in profile_values.values(json.loads(_eventpath.profile_json(profile))):
        r = v.free or v.range
        if r is None or not isinstance(v.value, (int, float)) or r["min"] == r["max"]:
            continue
        out.append({"key": v.key, "value": float(v.value), "lo": float(r["min"]), "hi": float(r["max"]),
                    "why": r.get("why", "free parameter (calibrate's range)"), "free": v.free is not None})
    return out


def _run(exp_id: str, profile: str, values: dict, duration: float | None, seeds: int, first_seed: int = 0) -> list[dict]:
    """The experiment's rows (as dicts) with the profile ``values`` overridden, over seeds
    ``first_seed ..`` (a worker's job)."""
    from eventpath import api
    from eventpath.reproduce import EXPERIMENTS, ensemble

    e = EXPERIMENTS[exp_id]
    try:
        with api.memo(), api.overriding(profile, values):
            rows = ensemble.combine(ensemble.run_members(e.compare, range(first_seed, first_seed + seeds), duration, lambda _l: None))
    except InputError:
        # A point the profile refuses (a value above the one it is bounded by, NOT_ABOVE): the
        # screen skips it and says so.
        return None
    for r in rows:
        if r.published is not None and e.is_baseline(r.config):
            r.role = "calibration"
    return [{"row": r, "d": r.as_dict()} for r in rows]


def _effects(base: list[dict], other: list[dict] | None) -> list[float | None]:
    from eventpath.reproduce.ensemble import moved

    if other is None:
        return [None] * len(base)
    out = []
    for b, o in zip(base, other):
        m = moved(b["row"], o["row"])
        if m is not None and m != float("inf") and b["row"].simulated is not None and o["row"].simulated is not None:
            m = m if o["row"].simulated >= b["row"].simulated else -m
        out.append(m)
    return out


def _noise(base: list[dict], others: list[list[dict]]) -> list[float]:
    """Each row's noise: the largest move, in tolerances, from the base to a base on other
    seeds (inf where a row has a value on one seed set and none on another)."""
    out = [0.0] * len(base)
    for other in others:
        for i, x in enumerate(_effects(base, other)):
            if x is not None:
                out[i] = max(out[i], abs(x))
    return out


def _within(rows: list[dict]) -> bool:
    return all(r["d"]["verdict"] != "miss" for r in rows if r["d"]["role"] == "calibration")


def analyse(exp_id: str, duration: float | None = None, seeds: int = 1, workers: int | None = None,
            scheduler: str | None = None, progress: Callable[[str], None] = lambda s: None,
            focus: int | None = None) -> dict:
    """Screen, detail and classify experiment ``exp_id`` (see the module doc); return the doc.

    ``focus`` N: detail only the members of the N groups that move each miss most (their union
    over the misses), not of every group that moves any row — the classification of an
    experiment whose every group moves some row (elvis-fig8: 69 of 85 values) within minutes; the
    other rows' movers are then only those among the detailed values, and the doc says so."""
    from eventpath import executor
    from eventpath.reproduce import EXPERIMENTS

    if exp_id not in EXPERIMENTS:
        raise InputError(f"sensitivity: unknown experiment {exp_id!r}; known: {', '.join(EXPERIMENTS)} (or 'all')")
    e = EXPERIMENTS[exp_id]
    if not e.profile:
        raise InputError(f"sensitivity: {exp_id} runs on no single profile")
    params = ranged_params(e.profile)
    with executor.start(scheduler, workers) as ex:
        def runs(points: list[dict]) -> list[list[dict]]:
            return list(ex.ordered(_run, [(exp_id, e.profile, v, duration, seeds) for v in points]))

        # The base at the profile's values, and twice more on other seeds: how far a row moves
        # between seeds is its noise, and a parameter's move below it is no move (screened at
        # one seed, every run is chaotic in its event order: without this floor every group
        # "moved" a row).
        base, *others = list(ex.ordered(_run, [(exp_id, e.profile, {}, duration, seeds, k * seeds)
                                                for k in range(1 + NOISE_BASES)]))
        noise = _noise(base, others)
        floor = [max(NEGLIGIBLE, n) for n in noise]
        progress(f"{exp_id}: base run on {1 + NOISE_BASES} seed sets, {len(params)} ranged parameters")
        # Group stage.
        groups = [params[i:i + GROUP] for i in range(0, len(params), GROUP)]
        ends = runs([{p["key"]: p[end] for p in g} for g in groups for end in ("lo", "hi")])
        live = []
        refused = []
        misses = [i for i, b in enumerate(base) if b["d"]["verdict"] == "miss"]
        # Per miss row, each group's largest move on it (for ``focus``).
        on_miss: dict[int, list[tuple[float, int]]] = {i: [] for i in misses}
        for k, g in enumerate(groups):
            pair = ends[2 * k:2 * k + 2]
            effects = [_effects(base, rows) for rows in pair if rows is not None]
            moves = [abs(x) >= f for eff in effects for x, f in zip(eff, floor) if x is not None]
            for i in misses:
                size = max((abs(eff[i]) for eff in effects if eff[i] is not None), default=0.0)
                if size >= floor[i] or any(rows is None for rows in pair):
                    on_miss[i].append((size if all(rows is not None for rows in pair) else float("inf"), k))
            # A group the profile refused at an end is screened member by member.
            if focus is None and (any(rows is None for rows in pair) or any(moves)):
                live += g
        if focus is not None:
            chosen = sorted({k for i in misses for _, k in sorted(on_miss[i], reverse=True)[:focus]})
            live = [p for k in chosen for p in groups[k]]
            progress(f"{exp_id}: {len(live)} of {len(params)} parameters in the {focus} groups that move each of "
                     f"{len(misses)} misses most")
        else:
            progress(f"{exp_id}: {len(live)} of {len(params)} parameters in groups that move a row")
        # One at a time.
        singles = runs([{p["key"]: p[end]} for p in live for end in ("lo", "hi")])
        effect = {}
        for k, p in enumerate(live):
            effect[p["key"]] = (_effects(base, singles[2 * k]), _effects(base, singles[2 * k + 1]))
            refused += [f"{p['key']} = {p[end]:g}" for end, rows in (("lo", singles[2 * k]), ("hi", singles[2 * k + 1]))
                        if rows is None]
        by_key = {p["key"]: p for p in params}
        rows_out = []
        to_classify = []
        for i, b in enumerate(base):
            d = dict(b["d"])
            movers = []
            for key, (lo, hi) in effect.items():
                a, z = lo[i], hi[i]
                size = max(abs(a) if a is not None else 0.0, abs(z) if z is not None else 0.0)
                if size >= floor[i]:
                    movers.append({"key": key, "at_lo": a, "at_hi": z, "size": size})
            movers.sort(key=lambda m: -m["size"])
            d["movers"] = movers[:TOP]
            d["noise"] = noise[i]
            rows_out.append(d)
            if d["verdict"] == "miss":
                to_classify.append(i)
        # Verdicts: combine the values that move each miss toward its published value.
        plans = []
        for i in to_classify:
            r = base[i]["row"]
            miss = r.miss() or 0.0
            toward = []
            if abs(d_miss(rows_out[i])) - 1.0 <= noise[i]:
                plans.append((i, toward, []))
                continue
            for key, (lo, hi) in effect.items():
                # An end helps when it moves the row against the sign of its miss.
                best = None
                for end, x in (("lo", lo[i]), ("hi", hi[i])):
                    if x is not None and x * miss < 0 and abs(x) >= floor[i] and (best is None or abs(x) > abs(best[1])):
                        best = (end, x)
                if best:
                    toward.append((key, best[0], best[1]))
            toward.sort(key=lambda t: -abs(t[2]))
            combos = [{k: by_key[k][end] for k, end, _ in toward[:n]} for n in range(1, min(COMBINE, len(toward)) + 1)]
            plans.append((i, toward, combos))
        results = runs([c for _, _, combos in plans for c in combos])
        pos = 0
        for i, toward, combos in plans:
            d = rows_out[i]
            r = base[i]["row"]
            gap = abs(d_miss(d)) - 1.0
            got = results[pos:pos + len(combos)]
            pos += len(combos)
            reached = conflict = over = None
            for c, rows in zip(combos, got):
                if rows is None:
                    continue
                if rows[i]["d"]["verdict"] == "ok":
                    if _within(rows):
                        reached = c
                        break
                    conflict = conflict or c
            if reached is None:
                # A combination that carries the row past its published value: some point on the
                # way (each value moved the same fraction of the way to its end) may meet it.
                over = next((c for c, rows in zip(combos, got)
                             if rows is not None and (rows[i]["row"].miss() or 0.0) * (r.miss() or 0.0) < 0), None)
                if over is not None:
                    reached, conflict = _bisect(runs, over, by_key, i, r.miss() or 0.0, conflict)
            if gap <= noise[i]:
                # Another seed set alone moves the row as far as its gap to the paper: at these
                # seeds and this length the screen cannot tell a value's move from the noise.
                d["miss_class"] = "unclassified"
                d["evidence"] = (f"its gap to the tolerance ({gap:.2f}) is within its seed "
                                 f"noise ({noise[i]:.2f} tolerances): run with more --seeds or a longer --duration")
            elif reached is not None:
                d["miss_class"] = "parametric"
                d["evidence"] = f"within tolerance at {_fmt(reached)} with the experiment's calibration rows held"
            elif conflict is not None:
                d["miss_class"] = "structural"
                d["evidence"] = (f"reached only with the experiment's calibration rows out of tolerance (at "
                                 f"{_fmt(conflict)}): the model ties this row to its baselines where the paper "
                                 "does not")
            else:
                d["miss_class"] = "structural"
                reach = max((abs(e_) for _, _, e_ in toward), default=0.0)
                if over is not None:
                    d["evidence"] = (f"values inside their ranges carry it past the paper's value ({_fmt(over)}) but "
                                     f"no point on the way lands within tolerance ({BISECT} halvings): the row jumps "
                                     "between regimes (a bistable mechanism), it does not slide")
                else:
                    d["evidence"] = (f"no value inside its range reaches it (the strongest single move covers "
                                     f"{reach:.2f} of its {abs(d_miss(d)):.2f} tolerances"
                                     + (f"; {len(combos)} combinations of the strongest tried" if combos else "") + ")")
    doc = {"id": exp_id, "profile": e.profile, "paper": _paper(e), "duration": duration, "seeds": seeds,
           "method": "group screening (groups of %d at both ends) then one-at-a-time at each range's ends, a move "
                     "counted only above the row's noise (its largest move across %d other seed sets) and %g "
                     "tolerances; misses combined toward their published value (up to %d values)"
                     % (GROUP, NOISE_BASES, NEGLIGIBLE, COMBINE)
                     + ("" if focus is None else
                        f"; focused: only the members of the {focus} groups that move each miss most were detailed, so "
                        "a row that does not miss lists only movers among them"),
           "focus": focus,
           "parameters": len(params), "screened_alone": len(live), "refused_points": refused,
           "unranged": "exact values (a count, a kernel's constant: the profile says why) are not screened", "rows": rows_out}
    return doc


#: Halvings of the way to an overshooting combination.
BISECT = 6


def _bisect(runs, over: dict, by_key: dict, i: int, miss0: float, conflict):
    """Search the way from the profile's values to ``over`` (which carried row ``i`` past its
    published value) for a point within tolerance: (the point if the calibration held there,
    else None; a conflicting point, if one was found)."""
    lo_t, hi_t = 0.0, 1.0
    for _ in range(BISECT):
        t = (lo_t + hi_t) / 2
        point = {k: by_key[k]["value"] + t * (v - by_key[k]["value"]) for k, v in over.items()}
        rows = runs([point])[0]
        if rows is None:
            return None, conflict
        m = rows[i]["row"].miss() or 0.0
        if rows[i]["d"]["verdict"] == "ok":
            if _within(rows):
                return point, conflict
            conflict = conflict or point
        if m * miss0 > 0:
            lo_t = t  # not far enough yet
        else:
            hi_t = t
    return None, conflict


def d_miss(d: dict) -> float:
    from eventpath.comparison import published_miss

    b = d.get("published_bounds")
    return published_miss(d["simulated"], d["published"], d["unit"], tuple(b) if b else None) or 0.0


def _fmt(values: dict) -> str:
    return ", ".join(f"{k} = {v:.4g}" for k, v in values.items())


def _paper(e) -> str:
    from eventpath.reproduce import paper_of

    return paper_of(e)


def write(doc: dict, out: Path) -> None:
    """``ID.sensitivity.json`` and ``ID.tornado.png``; a reproduce doc there gains the classes."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{doc['id']}.sensitivity.json").write_text(json.dumps(doc, indent=2) + "\n")
    tornado(doc, out / f"{doc['id']}.tornado.png")
    rep = out / f"{doc['id']}.json"
    if rep.exists():
        from eventpath.comparison import classes_into

        r = json.loads(rep.read_text())
        classes_into(r, doc)
        rep.write_text(json.dumps(r, indent=2) + "\n")


def tornado(doc: dict, path: Path, rows: int = 6) -> None:
    """Per miss (the largest first, up to ``rows``): its top movers' effects at the
    low (left bar) and high (right bar) end of each value's range, in tolerances."""
    from eventpath import palette
    from eventpath.plots import plt

    misses = [d for d in doc["rows"] if "miss_class" in d and d["movers"]]
    misses.sort(key=lambda d: -abs(d_miss(d)))
    misses = misses[:rows] or [d for d in doc["rows"] if d["movers"]][:rows]
    n = max(len(misses), 1)
    fig, axes = plt.subplots(n, 1, figsize=(7, 2.2 * n), squeeze=False)
    for ax, d in zip(axes[:, 0], misses):
        ms = d["movers"][:8]
        ys = range(len(ms))
        ax.barh(ys, [m["at_lo"] or 0.0 for m in ms], color=palette.NO_VERDICT, label="low end")
        ax.barh(ys, [m["at_hi"] or 0.0 for m in ms], color=palette.VERDICT_OK, alpha=0.7, label="high end")
        ax.set_yticks(list(ys), [m["key"] for m in ms], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(0, color="k", lw=0.6)
        miss = d_miss(d)
        ax.axvline(-miss, color=palette.VERDICT_MISS, ls="--", lw=0.8)
        role = " (calibration)" if d["role"] == "calibration" else ""
        ax.set_title(f"{d['config']} · {d['metric']}{role}: miss {miss:+.2f} tol. ({d.get('miss_class', 'no miss')})",
                     fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    axes[-1, 0].set_xlabel("move of the row, in tolerances (dashed: the move that would meet the paper)", fontsize=8)
    if not misses:
        axes[0, 0].text(0.5, 0.5, "no row moves", ha="center", va="center")
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"{doc['id']}: what moves each row (profile {doc['profile']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
