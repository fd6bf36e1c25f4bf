"""The report's pages, each from what the commands wrote (:mod:`.gather`): the overview, the
reproduction scorecard, a page per reproduction, the head-to-head, the testbed comparison and
the profiles. Returns {file name: HTML body and title}; :mod:`eventpath.report` frames them."""

from __future__ import annotations

from html import escape as _esc

from eventpath import profile_values
from eventpath.report.gather import Gathered
from eventpath.report.html import figure, link, para, table

#: Head-to-head rows shown per workload (compare.json and ranked.csv have them all).
COMPARE_TOP = 15


def repro_page(doc: dict) -> str:
    return f"repro-{doc['id']}.html"


def _verdict(v: str | None):
    return (v, v) if v in ("ok", "miss") else ""


def _ratio(r: dict) -> float | None:
    return r["simulated"] / r["published"] if r["simulated"] is not None and r["published"] else None


def scorecard(g: Gathered) -> tuple[str, str]:
    from eventpath import reproduce

    cards = reproduce.scorecard(g.docs)
    body = [para("Rows within tolerance of those the papers give a number for (percentages within ±10 points, "
                 "rates within ±25 %). Calibration rows were fitted to (agreement there is by construction); "
                 "predictions are the test of the model."),
            table(["profile", "role", "within tolerance", "rows", "%"],
                  [[c["profile"], c["role"], c["ok"], c["rows"], 100.0 * c["ok"] / c["rows"]] for c in cards])]
    body.append("<h2>Scorecard v2, per paper</h2>")
    body.append(para("Calibration: the baselines' rows (the papers' hosts without their mechanisms). Directions and "
                     "magnitudes: the mechanisms' rows, predictions never fitted. Each miss is classed by "
                     "eventpath sensitivity: parametric (values inside their plausible ranges reach it with the "
                     "experiment's calibration rows held), structural (none do: a behaviour is missing) or "
                     "unclassified; its evidence is on the experiment's page."))

    def frac(cell):
        return f"{cell[0]}/{cell[1]}" + (f" ({100 * cell[0] / cell[1]:.0f} %)" if cell[1] else "")

    body.append(table(["paper", "calibration", "directions", "magnitudes", "prediction misses: parametric",
                       "structural", "unclassified", "calibration misses: parametric", "structural", "unclassified"],
                      [[c["paper"], frac(c["calibration"]), frac(c["directions"]), frac(c["magnitudes"]),
                        *(c["misses"][k] for k in reproduce.MISS_CLASSES),
                        *(c["calibration_misses"][k] for k in reproduce.MISS_CLASSES)]
                       for c in reproduce.scorecard_v2(g.docs)]))
    if g.missing:
        body.append(para(f"Not run or not in the given directory: {', '.join(g.missing)}.", "note"))
    body.append("<h2>Every row with a published value</h2>")
    rows = []
    for d in g.docs:
        for r in d["rows"]:
            if r["published"] is not None:
                rows.append([(link(repro_page(d), d["id"]), ""), d["profile"], r["role"], r["config"], r["metric"],
                             r["unit"], r["simulated"], r["published"], _ratio(r), _verdict(r["verdict"]),
                             _class(r)])
    body.append(table(["experiment", "profile", "role", "config", "metric", "unit", "simulated", "published",
                       "sim/pub", "verdict", "miss class"], rows))
    return "Reproduction scorecard", "\n".join(body)


def _class(r: dict) -> str:
    return r.get("miss_class", "unclassified") if r.get("verdict") == "miss" else ""


def reproduction(doc: dict) -> tuple[str, str]:
    ok = sum(r["verdict"] == "ok" for r in doc["rows"])
    judged = sum(r["verdict"] is not None for r in doc["rows"])
    body = [para(f"{doc['source']} · profile {doc['profile']} · {ok} of {judged} rows with a published value "
                 "within tolerance"),
            figure(f"reproduce/{doc['id']}.png", f"{doc['id']}: simulated beside published",
                   "Simulated values as bars or lines (one colour per configuration), published values as diamonds "
                   "whose whiskers span the tolerance.")]
    if doc.get("notes"):
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_esc(n)}</li>" for n in doc["notes"]) + "</ul>")
    body.append("<h2>Rows</h2>")
    body.append(table(["config", "metric", "unit", "simulated", "published", "sim/pub", "verdict", "role"],
                      [[r["config"], r["metric"], r["unit"], r["simulated"], r["published"], _ratio(r),
                        _verdict(r["verdict"]), r["role"]] for r in doc["rows"]]))
    classed = [r for r in doc["rows"] if r.get("miss_evidence")]
    if classed:
        body.append("<h2>Why each miss misses (eventpath sensitivity)</h2>")
        body.append(table(["config", "metric", "role", "class", "evidence"],
                          [[r["config"], r["metric"], r["role"], r["miss_class"], r["miss_evidence"]] for r in classed]))
    measures = {r["metric"]: r["definition"] for r in doc["rows"] if r.get("definition")}
    if measures:
        body.append("<h2>What each metric measures</h2><dl>" + "".join(
            f"<dt>{_esc(m)}</dt><dd>{_esc(d)}</dd>" for m, d in measures.items()) + "</dl>")
    body.append(para(f"Data: reproduce/{doc['id']}.json", "note"))
    return f"{doc['id']}: {doc['title']}", "\n".join(body)


def compare(c: dict) -> tuple[str, str]:
    body = [para(f"Made by: {c.get('command') or 'eventpath compare'} · eventpath {c.get('version')} · commit "
                 f"{c.get('commit')} · {c.get('cells')} cells, {c.get('runs')} runs, seeds "
                 f"{', '.join(map(str, c.get('seeds', [])))}"),
            figure("compare/pareto.png", "throughput and p99 latency against host CPU per workload",
                   "Throughput (top) and p99 latency (bottom) against host CPU; the Pareto frontier named, the "
                   "scenario as given starred.")]
    for same in c.get("identical_everywhere", []):
        body.append(para(f"{same['family']}: {' = '.join(same['names'])} gave identical results in every cell.",
                         "note"))
    for w, rows in c.get("results", {}).items():
        unit = rows[0].get("throughput_unit", "") if rows else ""
        body.append(f"<h2>{_esc(w)}</h2>")
        body.append(para(f"The {min(COMPARE_TOP, len(rows))} best of {len(rows)} distinct results by throughput "
                         f"({unit}); compare/ranked.csv has every one.", "note"))
        body.append(table(["rank", "delivery · handling · moderation · routing · halt_poll", "throughput",
                           "vs base %", "p99 µs", "exits/s", "host CPU (cores)"],
                          [[r["rank"], r["cells"] + (" (as given)" if r.get("baseline") else ""), r.get("throughput"),
                            r.get("throughput_vs_baseline_pct"), r.get("p99_us"), r.get("exits_per_s"),
                            r.get("cpu_host")] for r in rows[:COMPARE_TOP]]))
    return "Head to head: every mechanism", "\n".join(body)


def advise(a: dict) -> tuple[str, str]:
    """The one-page answer of ``eventpath advise`` as it printed it, then its table."""
    body = [para(f"Scenario {a.get('scenario')} on profile {a.get('profile')} · seeds "
                 f"{', '.join(map(str, a.get('seeds', [])))} · {a.get('runs')} runs · docs/advise.md says how it "
                 "decides"),
            "<pre>" + _esc("\n".join(a.get("answer", []))) + "</pre>",
            "<h2>Every option and VM</h2>",
            table(["option", "category", "VM", "throughput gain %", "lo", "hi", "p99 change %", "host CPU Δ cores",
                   "seeds", "resolved"],
                  [[r["option"], r["category"], r.get("vm") or r.get("note"), r.get("throughput_gain_pct"),
                    r.get("throughput_gain_pct_lo"), r.get("throughput_gain_pct_hi"), r.get("p99_change_pct"),
                    r.get("cpu_delta_cores"), r.get("seeds"), str(r.get("resolved", ""))] for r in a.get("rows", [])]),
            para("Data: advise/advise.json, advise/advise.csv", "note")]
    return "Which switch pays (eventpath advise)", "\n".join(body)


def kvm(g: Gathered) -> tuple[str, str]:
    from eventpath import kvm_compare

    body = [para(f"How: {g.kvm_note}. Rates and CPU within ±25 %, latency medians within a factor 2.")]
    if g.kvm:
        body.append("<pre>" + _esc(kvm_compare.scorecard(g.kvm)) + "</pre>")
    for d in g.kvm:
        e = d["experiment"]
        body.append(f"<h2>{_esc(e)}: {d['within_tolerance']} of {d['judged']} rows within tolerance</h2>")
        body.append(figure(f"kvm/{e}/compare.png", f"{e}: simulated / testbed per row"))
        body.append(table(["config", "metric", "unit", "testbed (median)", "min", "max", "simulated", "sim/testbed",
                           "verdict"],
                          [[r["config"], r["metric"], r["unit"], r["testbed"], r["testbed_min"], r["testbed_max"],
                            r["simulated"], r["ratio"], _verdict(r["verdict"])] for r in d["rows"]]))
    return "Testbed: KVM beside its simulator twins", "\n".join(body)


def profiles(ps: dict[str, dict]) -> tuple[str, str]:
    body = [para("Every value of every built-in profile as the simulator reads it, with its unit and where it comes "
                 "from (profiles/*.toml). A table's own source is given beside the values it covers."),
            "<p>" + " · ".join(f'<a href="#{_esc(n)}">{_esc(n)}</a>' for n in ps) + "</p>"]
    for name, p in ps.items():
        body.append(f'<h2 id="{_esc(name)}">{_esc(name)}: {_esc(p.get("description", ""))}</h2>')
        rows = []
        for v in profile_values.values(p):
            note = profile_values.range_note(v)
            source = v.source + (f" [{note}]" if note else "")
            number = isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
            rows.append([v.key, (profile_values.exact(v.value), "num") if number else str(v.value), v.unit,
                         (_esc(source), "src")])
        body.append(table(["parameter", "value", "unit", "source"], rows))
    return "Profiles", "\n".join(body)


def index(g: Gathered, pages: dict[str, str], quick: bool) -> tuple[str, str]:
    from eventpath import reproduce

    cards = reproduce.scorecard(g.docs)
    body = []
    if quick:
        body.append(para("Built with --quick: every run was shortened; the numbers test the report, they are not "
                         "results.", "note"))
    body.append("<h2>Reproductions</h2>")
    body.append(table(["profile", "role", "within tolerance", "rows"],
                      [[c["profile"], c["role"], c["ok"], c["rows"]] for c in cards]))
    body.append(table(["experiment", "title", "profile", "within tolerance", "rows with a published value"],
                      [[(link(repro_page(d), d["id"]), ""), d["title"], d["profile"],
                        sum(r["verdict"] == "ok" for r in d["rows"]), sum(r["verdict"] is not None for r in d["rows"])]
                       for d in g.docs]))
    body.append("<h2>Pages</h2><ul>" + "".join(f"<li>{link(f, t)}</li>" for f, t in pages.items()) + "</ul>")
    body.append("<h2>How each part was made</h2><ul>" + "".join(f"<li>{_esc(n)}</li>" for n in g.notes) +
                f"<li>testbed: {_esc(g.kvm_note)}</li></ul>")
    return "eventpath report", "\n".join(body)
