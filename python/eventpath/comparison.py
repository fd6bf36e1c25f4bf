"""One comparison framework for the simulator held against a reference (issue 27): rows,
tolerances and verdicts, scorecards and figures, shared by ``eventpath reproduce`` (beside the
papers' published values) and ``eventpath kvm compare`` (beside this machine's KVM testbed).

A :class:`Row` is a configuration, a metric and its unit, the simulated value and the reference
it is held against. Its :class:`Tolerance` turns the two into a signed *miss* in tolerances
(``|miss| <= 1`` is within) and a verdict: ``"ok"``, ``"miss"``, or None where either value is
missing. Each world keeps the tolerance it has always had:

* reproduce (:class:`PublishedRow`, :func:`published_tolerance`): a percentage (share, EHT,
  rise) within ±10 points, anything else within ±25 %; a published 0 (a rate a mechanism
  removes) is met only by 0;
* kvm compare (:class:`TestbedRow`, :func:`testbed_tolerance`): rates and CPU within ±25 %,
  latency medians within a factor 2; values both below their unit's floor agree (kicks that
  do not happen, an idle CPU: :data:`FLOORS`); a value <= 0 on either side misses.

Verdicts are tallied (:func:`tally`) into per-experiment counts and scorecards
(:func:`scorecard`); the testbed's figure is drawn here too (:func:`testbed_figure`; a
reproduction's, in its paper's form, is ``eventpath.reproduce.figure``'s). Published values are comparison data only: nothing here feeds a
reference into a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable


# --- tolerances --------------------------------------------------------------------------------

class Tolerance:
    """How close a simulated value must be to its reference."""

    def miss(self, simulated: float, reference: float) -> float:
        """The signed distance of ``simulated`` from ``reference`` in tolerances (|x| <= 1 is
        within); both values are given."""
        raise NotImplementedError

    def verdict(self, simulated: float | None, reference: float | None) -> str | None:
        """``"ok"`` within the tolerance, ``"miss"`` outside, None without both values."""
        if simulated is None or reference is None:
            return None
        return "ok" if abs(self.miss(simulated, reference)) <= 1.0 else "miss"

    def band(self, reference: float) -> tuple[float, float]:
        """The values within the tolerance of ``reference`` (lowest, highest): what a figure
        shades around a reference."""
        raise NotImplementedError


@dataclass(frozen=True)
class Points(Tolerance):
    """Within ± ``points`` percentage points of the reference."""

    points: float

    def miss(self, simulated: float, reference: float) -> float:
        return (simulated - reference) / self.points

    def band(self, reference: float) -> tuple[float, float]:
        return reference - self.points, reference + self.points


@dataclass(frozen=True)
class Relative(Tolerance):
    """Within ± ``fraction`` of the reference. ``nonpositive`` says what a reference of 0 (or
    less) gets: ``"exact"`` — only a simulated 0 meets a 0 (miss 0 or ±2; a negative reference
    is compared as any other); ``"miss"`` — a value <= 0 on either side misses."""

    fraction: float
    nonpositive: str = "exact"

    def miss(self, simulated: float, reference: float) -> float:
        if self.nonpositive == "miss":
            if reference <= 0 or simulated <= 0:
                return math.inf
        elif reference == 0:
            return 0.0 if simulated == 0 else 2.0
        return (simulated / reference - 1.0) / self.fraction

    def band(self, reference: float) -> tuple[float, float]:
        # A reference of 0 is met only by 0 ("exact"): the band is the point itself.
        lo, hi = reference * (1.0 - self.fraction), reference * (1.0 + self.fraction)
        return min(lo, hi), max(lo, hi)


@dataclass(frozen=True)
class Factor(Tolerance):
    """Within a factor ``factor`` of the reference either way (reference / factor <= simulated
    <= reference x factor); a value <= 0 on either side misses."""

    factor: float

    def miss(self, simulated: float, reference: float) -> float:
        if reference <= 0 or simulated <= 0:
            return math.inf
        return math.log(simulated / reference) / math.log(self.factor)

    def verdict(self, simulated: float | None, reference: float | None) -> str | None:
        # The band's own comparison, not the logarithm's rounding, decides at its edges.
        if simulated is None or reference is None:
            return None
        if reference <= 0 or simulated <= 0:
            return "miss"
        r = simulated / reference
        return "ok" if 1.0 / self.factor <= r <= self.factor else "miss"

    def band(self, reference: float) -> tuple[float, float]:
        return reference / self.factor, reference * self.factor


@dataclass(frozen=True)
class Floor(Tolerance):
    """``inner``, except that values both below ``floor`` in magnitude agree (miss 0)."""

    inner: Tolerance
    floor: float

    def miss(self, simulated: float, reference: float) -> float:
        if abs(reference) < self.floor and abs(simulated) < self.floor:
            return 0.0
        return self.inner.miss(simulated, reference)

    def verdict(self, simulated: float | None, reference: float | None) -> str | None:
        if simulated is not None and reference is not None and abs(reference) < self.floor \
                and abs(simulated) < self.floor:
            return "ok"
        return self.inner.verdict(simulated, reference)

    def band(self, reference: float) -> tuple[float, float]:
        lo, hi = self.inner.band(reference)
        return (min(lo, -self.floor), max(hi, self.floor)) if abs(reference) < self.floor else (lo, hi)


@dataclass(frozen=True)
class Within(Tolerance):
    """A published range or bound (``lo`` or ``hi`` None: one-sided): a value inside it misses
    by 0; outside, by ``inner``'s distance from the nearer end. How a paper's "1.4x-2.7x",
    "at most 10 %" or "over 90 %" is held, rather than as a point it never gave."""

    inner: Tolerance
    lo: float | None
    hi: float | None

    def miss(self, simulated: float, reference: float) -> float:
        if self.lo is not None and simulated < self.lo:
            return self.inner.miss(simulated, self.lo)
        if self.hi is not None and simulated > self.hi:
            return self.inner.miss(simulated, self.hi)
        return 0.0

    def band(self, reference: float) -> tuple[float, float]:
        lo = self.inner.band(self.lo)[0] if self.lo is not None else -math.inf
        hi = self.inner.band(self.hi)[1] if self.hi is not None else math.inf
        return lo, hi


@dataclass(frozen=True)
class Holds(Tolerance):
    """A stated direction ("ELVIS beats the Baseline", "the gain grows with the VMs"): the row's
    value is 1 where it holds in the run and 0 where it fails; the paper's is 1. Only the same
    answer agrees (miss 0, else ±2)."""

    def miss(self, simulated: float, reference: float) -> float:
        return 0.0 if simulated == reference else math.copysign(2.0, simulated - reference)

    def band(self, reference: float) -> tuple[float, float]:
        return reference, reference


#: reproduce's bar (the issue's): percentages within ±10 points, rates within ±25 %.
SHARE_POINTS = Points(10.0)
PUBLISHED_RATE = Relative(0.25)
#: A direction row's unit and tolerance.
HOLDS_UNIT = "holds"
HOLDS = Holds()

#: kvm compare's bars: rates and CPU ±25 %, latency medians a factor 2.
TESTBED_RATE = Relative(0.25, nonpositive="miss")
TESTBED_LATENCY = Factor(2.0)
#: Values below these agree whatever their ratio (kicks that do not happen, an idle thread,
#: threads that stay on their CPUs).
FLOORS = {"kicks/req": 0.01, "%": 2.0, "migrations/s": 10.0}


def published_tolerance(unit: str, bounds: tuple[float | None, float | None] | None = None) -> Tolerance:
    """reproduce's tolerance for a row in ``unit``: ±10 points for "%", a direction's exact
    answer for "holds", else ±25 %; held from a published range or bound where ``bounds``."""
    inner = SHARE_POINTS if unit == "%" else HOLDS if unit == HOLDS_UNIT else PUBLISHED_RATE
    return inner if bounds is None else Within(inner, *bounds)


def published_miss(simulated: float | None, published: float | None, unit: str,
                   bounds: tuple[float | None, float | None] | None = None) -> float | None:
    """How far ``simulated`` is from ``published`` in reproduce's tolerances (signed; |x| <= 1
    is within): percentages against ±10 points, rates against ±25 %, from the nearer end of a
    published range or bound; a published 0 (a rate posted interrupts remove) is met only by
    0: 0 or ±2. None without both values. The calibration objective is built from it."""
    if simulated is None or published is None:
        return None
    return published_tolerance(unit, bounds).miss(simulated, published)


def testbed_tolerance(kind: str, unit: str) -> Tolerance:
    """kvm compare's tolerance for a metric of ``kind`` ("rate", "cpu" or "latency") in
    ``unit``: a factor 2 for latency, else ±25 %, with the unit's floor if it has one."""
    t = TESTBED_LATENCY if kind == "latency" else TESTBED_RATE
    floor = FLOORS.get(unit)
    return t if floor is None else Floor(t, floor)


# --- rows --------------------------------------------------------------------------------------

@dataclass
class Row:
    """One compared value: ``simulated`` beside ``reference``."""

    config: str
    metric: str
    unit: str
    simulated: float | None
    reference: float | None

    @property
    def tolerance(self) -> Tolerance:
        raise NotImplementedError

    def verdict(self) -> str | None:
        return self.tolerance.verdict(self.simulated, self.reference)

    def miss(self) -> float | None:
        """The signed miss in tolerances, None without both values."""
        if self.simulated is None or self.reference is None:
            return None
        return self.tolerance.miss(self.simulated, self.reference)

    def ratio(self) -> float | None:
        """simulated / reference, None without both (or with a reference of 0)."""
        return self.simulated / self.reference if (self.simulated is not None and self.reference) else None


@dataclass
class PublishedRow(Row):
    """A reproduction's row: the reference is the paper's published value (None where it
    publishes none; a range's midpoint or a bound's value, with ``bounds``). ``role`` is
    "calibration" for a row of a baseline configuration (the paper's host without its
    mechanism), else "prediction". ``spread`` is the simulated value's spread over an ensemble
    of seeds (``{"seeds", "sd", "min", "max"}``), ``converged`` whether doubling the seeds and
    the run length moved it by under a tenth of its tolerance (None: not checked)."""

    role: str = "prediction"
    bounds: tuple[float | None, float | None] | None = None
    spread: dict | None = None
    converged: bool | None = None
    #: How the paper gives it: "value", "range", "at_most", "at_least" or "holds".
    kind: str = "value"
    #: What the row measures, on which VMs or CPUs, a percentage's base (its published file's
    #: ``[measures]``; None for a row the paper gives no value for).
    definition: str | None = None

    @property
    def tolerance(self) -> Tolerance:
        return published_tolerance(self.unit, self.bounds)

    @property
    def published(self) -> float | None:
        return self.reference

    def as_dict(self) -> dict:
        d = {"config": self.config, "metric": self.metric, "unit": self.unit, "simulated": self.simulated,
             "published": self.reference, "verdict": self.verdict(), "role": self.role}
        if self.kind != "value" and self.reference is not None:
            d["published_kind"] = self.kind
        if self.bounds is not None:
            d["published_bounds"] = list(self.bounds)
        if self.spread is not None:
            d["spread"] = self.spread
        if self.converged is not None:
            d["converged"] = self.converged
        if self.definition:
            d["definition"] = self.definition
        return d


@dataclass
class TestbedRow(Row):
    """A simulator twin's row: the reference is the median of the testbed's repeats, their
    range beside it; ``kind`` ("rate", "cpu", "latency") picks the tolerance."""

    __test__ = False  # not a pytest class

    kind: str = "rate"
    testbed_min: float | None = None
    testbed_max: float | None = None

    @property
    def tolerance(self) -> Tolerance:
        return testbed_tolerance(self.kind, self.unit)

    def noisy(self) -> bool:
        """The testbed's own repeats differ from each other by more than the tolerance: the
        machine's noise is larger than the bar, so no simulated value can be judged against it."""
        lo, hi = self.testbed_min, self.testbed_max
        return lo is not None and hi is not None and lo > 0 and self.tolerance.verdict(hi, lo) == "miss"

    def verdict(self) -> str | None:
        return None if self.noisy() else super().verdict()

    def as_dict(self) -> dict:
        d = {"config": self.config, "metric": self.metric, "unit": self.unit, "kind": self.kind,
             "testbed": self.reference, "testbed_min": self.testbed_min, "testbed_max": self.testbed_max,
             "simulated": self.simulated, "ratio": self.ratio(), "verdict": self.verdict()}
        if self.noisy():
            d["unjudged"] = "the testbed's repeats differ by more than the tolerance (noise)"
        return d


# --- scorecards --------------------------------------------------------------------------------

def tally(rows: Iterable[dict]) -> tuple[int, int]:
    """(rows within tolerance, rows judged) of rows as written (``verdict`` key)."""
    judged = [r for r in rows if r["verdict"]]
    return sum(r["verdict"] == "ok" for r in judged), len(judged)


def scorecard(docs: list[dict], group: Callable[[dict, dict], dict], name: Callable[[dict, dict], str]) -> list[dict]:
    """The judged rows of ``docs`` tallied per group: ``group(doc, row)`` gives the group's
    fields (a dict), ``name(doc, row)`` a miss's name. One card per group, sorted by its
    fields: ``{**fields, "ok", "rows", "misses"}``."""
    cards: dict[tuple, dict] = {}
    for d in docs:
        for r in d["rows"]:
            if r["verdict"] is None:
                continue
            fields = group(d, r)
            c = cards.setdefault(tuple(fields.values()), {**fields, "ok": 0, "rows": 0, "misses": []})
            c["rows"] += 1
            if r["verdict"] == "ok":
                c["ok"] += 1
            else:
                c["misses"].append(name(d, r))
    return [cards[k] for k in sorted(cards)]


def published_scorecard(docs: list[dict]) -> list[dict]:
    """reproduce's scorecard: per profile and role, rows within tolerance of those with a
    published value, and the misses (``experiment:config/metric``)."""
    return scorecard(docs, lambda d, r: {"profile": d.get("profile", "?"), "role": r.get("role", "prediction")},
                     lambda d, r: f"{d['id']}:{r['config']}/{r['metric']}")


def print_published_scorecard(cards: list[dict]) -> None:
    print("scorecard (rows within tolerance / rows with a published value; predictions are the test "
          "of the model, calibration rows were fitted):")
    for c in cards:
        print(f"  {c['profile']:8s} {c['role']:12s} {c['ok']:3d} / {c['rows']:3d}"
              f"  ({100 * c['ok'] / c['rows']:5.1f} %)")
        for m in c["misses"]:
            print(f"      miss: {m}")


#: Scorecard v2's classes of a prediction's miss (issue 47): reached by values inside their
#: ranges with the calibration still within tolerance, reached by none (a behaviour is
#: missing), or not yet looked at (``eventpath sensitivity``).
MISS_CLASSES = ("parametric", "structural", "unclassified")


def scorecard_v2(docs: list[dict]) -> list[dict]:
    """reproduce's scorecard per paper (issue 47): calibration rows within tolerance; the
    predictions' stated directions that hold; the predictions' magnitudes within tolerance;
    the prediction misses by class, the calibration misses by class; the rows that did not
    converge. Each card: ``{paper, calibration: [ok, n], directions: [ok, n], magnitudes: [ok, n],
    misses: {class: n}, calibration_misses: {class: n}, not_converged, converge_checked, missed:
    [names]}`` (``missed`` names the prediction misses)."""
    cards: dict[str, dict] = {}
    for d in docs:
        paper = d.get("paper", "other")
        c = cards.setdefault(paper, {"paper": paper, "calibration": [0, 0], "directions": [0, 0],
                                     "magnitudes": [0, 0], "misses": dict.fromkeys(MISS_CLASSES, 0),
                                     "calibration_misses": dict.fromkeys(MISS_CLASSES, 0),
                                     "not_converged": 0, "converge_checked": 0, "missed": []})
        for r in d["rows"]:
            if r.get("converged") is not None:
                c["converge_checked"] += 1
                c["not_converged"] += not r["converged"]
            if r["verdict"] is None:
                continue
            if r.get("role") == "calibration":
                cell = c["calibration"]
            else:
                cell = c["directions"] if r["unit"] == HOLDS_UNIT else c["magnitudes"]
            cell[1] += 1
            if r["verdict"] == "ok":
                cell[0] += 1
            elif r.get("role") == "calibration":
                c["calibration_misses"][r.get("miss_class", "unclassified")] += 1
            else:
                cls = r.get("miss_class", "unclassified")
                c["misses"][cls] += 1
                c["missed"].append(f"{d['id']}:{r['config']}/{r['metric']} ({cls})")
    order = ["ES2", "ELVIS", "DID", "CGR/AIR", "hBalance", "other"]
    return sorted(cards.values(), key=lambda c: (order.index(c["paper"]) if c["paper"] in order else 99, c["paper"]))


def classes_into(reproduced: dict, sens: dict) -> None:
    """Each miss (prediction or calibration) of a reproduce doc that an ``eventpath sensitivity``
    doc ``sens`` classed gains its ``miss_class`` and ``miss_evidence`` (a row no longer a miss
    gets none)."""
    classes = {(d["config"], d["metric"]): d for d in sens["rows"] if "miss_class" in d}
    for row in reproduced["rows"]:
        c = classes.get((row["config"], row["metric"]))
        if c is not None and row.get("verdict") == "miss":
            row["miss_class"], row["miss_evidence"] = c["miss_class"], c["evidence"]


def print_scorecard_v2(cards: list[dict]) -> None:
    def frac(cell):
        return f"{cell[0]:3d}/{cell[1]:<3d}" + (f" {100 * cell[0] / cell[1]:3.0f} %" if cell[1] else "      ")

    print("scorecard v2 (calibration: baselines' rows, fitted; directions and magnitudes: predictions, the test "
          "of the model; misses by class: eventpath sensitivity):")
    print(f"  {'':9s} {'':13s} {'':13s} {'':13s}   {'prediction misses':^30s}   {'calibration misses':^18s}")
    print(f"  {'paper':9s} {'calibration':>13s} {'directions':>13s} {'magnitudes':>13s}   "
          f"{'parametric':>10s} {'structural':>10s} {'unclass.':>8s}   {'par.':>4s} {'str.':>4s} {'unc.':>4s}   "
          "not converged")
    for c in cards:
        m, k = c["misses"], c.get("calibration_misses", dict.fromkeys(MISS_CLASSES, 0))
        conv = f"{c['not_converged']} of {c['converge_checked']}" if c["converge_checked"] else "not checked"
        print(f"  {c['paper']:9s} {frac(c['calibration']):>13s} {frac(c['directions']):>13s} "
              f"{frac(c['magnitudes']):>13s}   {m['parametric']:10d} {m['structural']:10d} {m['unclassified']:8d}   "
              f"{k['parametric']:4d} {k['structural']:4d} {k['unclassified']:4d}   {conv}")


def print_published_table(doc: dict) -> None:
    """A reproduction's rows as an aligned table with the simulated/published ratio and the verdict."""
    print(f"{doc['id']}: {doc['title']} [{doc['source']}]")
    wide = any((r.get("spread") or {}).get("sd") is not None for r in doc["rows"])
    print(f"  {'config':18s} {'metric':26s} {'simulated':>12s}{' ±sd over seeds' if wide else ''} {'published':>12s} "
          f"{'sim/pub':>8s}  {'unit':8s} bar   role")
    for r in doc["rows"]:
        sim, pub = r["simulated"], r["published"]
        ratio = f"{sim / pub:8.2f}" if sim is not None and pub else f"{'':8s}"
        fs = lambda v: f"{v:12,.2f}" if v is not None else f"{'—':>12s}"  # noqa: E731
        role = "calib." if r.get("role") == "calibration" else ""
        sd = (r.get("spread") or {}).get("sd")
        spread = f" ±{sd:<12.3g}  " if sd is not None else " " * 16 if wide else ""
        lo, hi = r.get("published_bounds") or (None, None)
        shown = fs(pub) if r.get("published_bounds") is None else f"{'≤' + format(hi, ',.4g') if lo is None else '≥' + format(lo, ',.4g') if hi is None else format(lo, '.3g') + '..' + format(hi, '.3g'):>12s}"
        conv = " not converged" if r.get("converged") is False else ""
        print(f"  {r['config']:18s} {r['metric']:26s} {fs(sim)}{spread} {shown} {ratio}  {r['unit']:8s} "
              f"{r.get('verdict') or '':5s} {role}{conv}")
    measures = {r["metric"]: r["definition"] for r in doc["rows"] if r.get("definition")}
    if measures:
        print("  what each metric measures:")
        for m, d in measures.items():
            print(f"    {m}: {d}")


def testbed_scorecard(docs: list[dict]) -> str:
    """kvm compare's scorecard: rows within tolerance of those judged, per experiment and in all
    (from each doc's ``within_tolerance`` and ``judged``), and the probe's refused keys."""
    def cell(x, fmt):
        return "-" if x is None else format(x, fmt)

    lines = ["experiment  within  judged  unjudged   others' CPUs  steal %  spread",
             "----------  ------  ------  --------   ------------  -------  ------"]
    for d in docs:
        n = d.get("noise") or {}
        lines.append(f'{d["experiment"]:<10}  {d["within_tolerance"]:>6}  {d["judged"]:>6}  {n.get("unjudged", 0):>8}'
                     f'   {cell(n.get("quiet_cpus_median"), ".2f"):>12}  {cell(n.get("steal_pct"), ".1f"):>7}'
                     f'  {cell(n.get("spread_median"), ".1%"):>6}')
    ok, n = sum(d["within_tolerance"] for d in docs), sum(d["judged"] for d in docs)
    unjudged = sum((d.get("noise") or {}).get("unjudged", 0) for d in docs)
    lines.append(f'{"all":<10}  {ok:>6}  {n:>6}  {unjudged:>8}   ({100.0 * ok / n if n else 0:.0f} % of judged rows within tolerance)')
    lines.append("others' CPUs: other processes' demand before each point, median (CPUs); steal: the hypervisor's, "
                 "median; spread: the testbed repeats' (max - min) / median, median over rows; unjudged: rows "
                 "whose repeats differ by more than the tolerance")
    shields = sorted({d["shield"] for d in docs if d.get("shield")})
    if shields:
        lines.append(f"testbed threads: {', '.join(shields)}")
    refused = sorted({k for d in docs for k in d.get("profile_refused", [])})
    if refused:
        lines.append(f"(the probe refused {', '.join(refused)}: the twins used es2's value there)")
    return "\n".join(lines)


# --- figures -----------------------------------------------------------------------------------

def band(kind: str) -> tuple[float, float]:
    """The ratios (simulated / testbed) within kvm compare's tolerance for a metric of ``kind``."""
    t = TESTBED_LATENCY if kind == "latency" else TESTBED_RATE
    return (1 / t.factor, t.factor) if isinstance(t, Factor) else (1 - t.fraction, 1 + t.fraction)


def testbed_figure(doc: dict, path: Path) -> None:
    """One bar per row: simulated / testbed on a log scale, the tolerance band shaded."""
    from eventpath import palette
    from eventpath.plots import plt

    rows = [r for r in doc["rows"] if r["ratio"] is not None or r["verdict"]]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    labels = [f'{r["config"]} · {r["metric"]}' for r in rows]
    ratios = [r["ratio"] if r["ratio"] else 1.0 for r in rows]
    colors = [palette.VERDICT_OK if r["verdict"] == "ok" else palette.VERDICT_MISS if r["verdict"] == "miss"
              else palette.NO_VERDICT for r in rows]
    ax.barh(range(len(rows)), [max(x, 1e-3) for x in ratios], color=colors, left=0)
    ax.set_xscale("log")
    # Each row's own band: a latency is judged within a factor 2, a rate or a CPU share within
    # ±25 % (a unit's floor, where both values are below it, is not drawn).
    for i, r in enumerate(rows):
        lo, hi = band(r.get("kind", "rate"))
        ax.fill_betweenx([i - 0.5, i + 0.5], lo, hi, color=palette.TOLERANCE, alpha=0.12, lw=0)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated / testbed (log)")
    ax.set_title(f'{doc["experiment"]}: {doc["within_tolerance"]} of {doc["judged"]} rows within tolerance', fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
