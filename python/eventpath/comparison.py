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


#: reproduce's bar (the issue's): percentages within ±10 points, rates within ±25 %.
SHARE_POINTS = Points(10.0)
PUBLISHED_RATE = Relative(0.25)

#: kvm compare's bars: rates and CPU ±25 %, latency medians a factor 2.
TESTBED_RATE = Relative(0.25, nonpositive="miss")
TESTBED_LATENCY = Factor(2.0)
#: Values below these agree whatever their ratio (kicks that do not happen, an idle thread,
#: threads that stay on their CPUs).
FLOORS = {"kicks/req": 0.01, "%": 2.0, "migrations/s": 10.0}


def published_tolerance(unit: str) -> Tolerance:
    """reproduce's tolerance for a row in ``unit``: ±10 points for "%", else ±25 %."""
    return SHARE_POINTS if unit == "%" else PUBLISHED_RATE


def published_miss(simulated: float | None, published: float | None, unit: str) -> float | None:
    """How far ``simulated`` is from ``published`` in reproduce's tolerances (signed; |x| <= 1
    is within): percentages against ±10 points, rates against ±25 %; a published 0 (a rate
    posted interrupts remove) is met only by 0: 0 or ±2. None without both values. The
    calibration objective is built from it."""
    if simulated is None or published is None:
        return None
    return published_tolerance(unit).miss(simulated, published)


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
    publishes none). ``role`` is "calibration" for a target of its profile's fit, else
    "prediction"."""

    role: str = "prediction"

    @property
    def tolerance(self) -> Tolerance:
        return published_tolerance(self.unit)

    @property
    def published(self) -> float | None:
        return self.reference

    def as_dict(self) -> dict:
        return {"config": self.config, "metric": self.metric, "unit": self.unit, "simulated": self.simulated,
                "published": self.reference, "verdict": self.verdict(), "role": self.role}


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
        d = {"config": self.config, "metric": self.metric, "unit": self.unit, "testbed": self.reference,
             "testbed_min": self.testbed_min, "testbed_max": self.testbed_max, "simulated": self.simulated,
             "ratio": self.ratio(), "verdict": self.verdict()}
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


def print_published_table(doc: dict) -> None:
    """A reproduction's rows as an aligned table with the simulated/published ratio and the verdict."""
    print(f"{doc['id']}: {doc['title']} [{doc['source']}]")
    print(f"  {'config':18s} {'metric':26s} {'simulated':>12s} {'published':>12s} {'sim/pub':>8s}  {'unit':8s} bar   role")
    for r in doc["rows"]:
        sim, pub = r["simulated"], r["published"]
        ratio = f"{sim / pub:8.2f}" if sim is not None and pub else f"{'':8s}"
        fs = lambda v: f"{v:12,.2f}" if v is not None else f"{'—':>12s}"  # noqa: E731
        role = "calib." if r.get("role") == "calibration" else ""
        print(f"  {r['config']:18s} {r['metric']:26s} {fs(sim)} {fs(pub)} {ratio}  {r['unit']:8s} {r.get('verdict') or '':5s} {role}")


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
    ax.axvspan(0.75, 1.25, color=palette.TOLERANCE, alpha=0.12)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated / testbed (log)")
    ax.set_title(f'{doc["experiment"]}: {doc["within_tolerance"]} of {doc["judged"]} rows within tolerance', fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
