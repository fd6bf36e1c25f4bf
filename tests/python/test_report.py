"""``eventpath report`` (issue 29 items 2 and 3): a quick site opened page by page in a real
headless browser (Debian's Chromium driven by Playwright), the directory it refuses, and every
reproduction drawn in its paper's form."""

import json
import re
import shutil
from pathlib import Path

import pytest

from eventpath import palette, reproduce
from eventpath._eventpath import InputError
from eventpath.report import OUT as report_dir
from eventpath.reproduce import figure

CHROMIUM = Path("/usr/bin/chromium")
# Without these Chromium waits on the network, which the test machines do not have.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A --quick report (with the testbed page where /dev/kvm is usable), built once."""
    from eventpath import report

    out = tmp_path_factory.mktemp("site") / "report"
    report.build(report_dir.check(str(out)), quick=True, command="eventpath report --quick (test)", say=lambda s: None)
    return out


def test_every_page_loads_in_a_browser_without_errors_and_shows_every_figure(site, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (`make browser` installs Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing (pip install "
                                                                  "-e '.[dev]')")
    pages = sorted(site.glob("*.html"))
    assert {"index.html", "scorecard.html", "compare.html", "profiles.html"} <= {p.name for p in pages}
    assert len([p for p in pages if p.name.startswith("repro-")]) >= 6
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=str(CHROMIUM),
                                                    headless=True, args=CHROMIUM_ARGS)
        try:
            for p in pages:
                problems = []
                page = ctx.new_page()
                page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                        if m.type in ("error", "warning") else None)
                page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
                resp = page.goto(p.as_uri(), wait_until="load")
                assert resp is None or resp.ok, p.name
                imgs = page.evaluate("[...document.images].map(i => [i.getAttribute('src'), i.complete, "
                                     "i.naturalWidth])")
                links = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))")
                page.close()
                assert not problems, f"{p.name}: {problems}"
                for src, complete, width in imgs:
                    assert (site / src).is_file(), f"{p.name}: {src} is not in the site"
                    assert complete and width > 0, f"{p.name}: {src} did not render"
                for href in links:
                    if not href.startswith("#"):
                        assert (site / href.split("#")[0]).is_file(), f"{p.name}: link to {href} leads nowhere"
                if p.name.startswith("repro-") or p.name == "compare.html":
                    assert imgs, f"{p.name} shows no figure"
        finally:
            ctx.close()


def test_the_site_shows_every_row_and_every_profile_value_and_how_it_was_made(site):
    from eventpath import api

    score = (site / "scorecard.html").read_text()
    for d in (json.loads(f.read_text()) for f in (site / "reproduce").glob("*.json") if f.name != "scorecard.json"):
        page = (site / f"repro-{d['id']}.html").read_text()
        # every row beside its published value, and each classified miss's evidence in a table of its own
        classed = sum(bool(r.get("miss_evidence")) for r in d["rows"])
        assert page.count("<tr>") == len(d["rows"]) + 1 + (classed + 1 if classed else 0)
        assert f"reproduce/{d['id']}.png" in page
        assert sum(r["published"] is not None for r in d["rows"]) <= score.count(f"repro-{d['id']}.html")
    prof = (site / "profiles.html").read_text()
    for name, _ in api.profiles():
        assert f'id="{name}"' in prof
    assert "exit.io_instruction_ns" in prof and "ns" in prof
    index = (site / "index.html").read_text()
    assert "--quick" in index and "eventpath report --quick (test)" in index
    made = json.loads((site / "report.json").read_text())
    assert made["quick"] and "version" in made and made["pages"][0] == "index.html"


def test_an_earlier_report_is_replaced_whole(site, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(site, out)
    (out / "repro-gone.html").write_text("an earlier report's page")
    report_dir.check(str(out))  # an earlier report is accepted ...
    with report_dir.staged(out) as tmp:
        (tmp / "index.html").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]  # ... and replaced, nothing left of it


@pytest.mark.parametrize("make, needle", [
    (lambda d: (d / "report").write_text("x"), "exists and is not a directory"),
    (lambda d: (d / "report").mkdir() or (d / "report" / "summary.json").write_text("{}"),
     "holds files a report does not write (summary.json)"),
    (lambda d: (d / "report").mkdir() or (d / "report" / "compare.json").write_text("{}"),
     "holds files a report does not write (compare.json)"),
])
def test_a_directory_a_report_may_not_write_is_refused_in_one_line(tmp_path, make, needle):
    make(tmp_path)
    with pytest.raises(InputError, match=re.escape(needle)):
        report_dir.check(str(tmp_path / "report"))


def test_the_command_refuses_bad_directories_with_exit_2_and_writes_nothing(cli, tmp_path):
    (tmp_path / "file").write_text("x")
    for args, needle in ((["--out", str(tmp_path / "file")], "exists and is not a directory"),
                         (["--out", str(tmp_path / "file" / "sub")], "is a file, not a directory"),
                         (["--out", str(tmp_path / "r"), "--compare-dir", str(tmp_path / "file")], "is a file"),
                         (["--out", str(tmp_path / "r"), "--compare-dir", str(tmp_path)], "holds no compare.json")):
        r = cli("report", *args)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not (tmp_path / "r").exists()


# --- item 3: every reproduction in its paper's form --------------------------------------------

@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """Every experiment, each run shortened (the numbers do not matter here, the rows do)."""
    out = tmp_path_factory.mktemp("repro")
    return {d["id"]: (d, out) for d in reproduce.run_many(list(reproduce.EXPERIMENTS), out, duration=0.005)}


@pytest.mark.parametrize("exp_id", list(reproduce.EXPERIMENTS))
def test_every_reproduction_draws_every_row_in_its_papers_form(docs, exp_id):
    doc, out = docs[exp_id]
    png = out / f"{exp_id}.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    axis = reproduce.EXPERIMENTS[exp_id].axis
    panels = figure.panels(figure.place(doc["rows"], axis))
    drawn = [id(p.row) for panel in panels for p in panel.points]
    assert sorted(drawn) == sorted(id(r) for r in doc["rows"])  # every row once, none dropped
    placed = figure.place(doc["rows"], axis)
    if axis is not None:  # the paper's axis holds nearly every value; the rest are summary values
        values = [p for p in placed if p.row["unit"] != "holds"]  # a stated direction is a summary
        assert sum(p.x is not None for p in values) >= 0.8 * len(values), axis.pattern
    sweep = any(isinstance(p.x, float) for p in placed)
    assert ("lines" in {p.kind for p in panels}) == sweep  # a sweep is lines against the paper's x-axis


def test_one_colour_per_configuration_and_exit_reason_everywhere():
    from eventpath import _eventpath

    assert list(palette.EXIT_REASONS) == _eventpath.exit_reasons()
    assert len(set(palette.EXIT_REASONS.values())) == len(palette.EXIT_REASONS)
    # A reason's colour is never a configuration's: a figure with both cannot be misread.
    assert not set(palette.EXIT_REASONS.values()) & set(palette.CONFIGS.values())
    assert palette.config_color("SRIOV@45.8K") == palette.CONFIGS["SRIOV"]
    assert palette.config_color("netperf+apache ELVIS") == palette.CONFIGS["ELVIS"]
    assert palette.config_color("some new config") == palette.config_color("some new config")
    assert palette.config_color("some new config") not in palette.EXIT_REASONS.values()


def test_scorecard_page_counts_miss_classes_and_the_experiment_page_gives_their_evidence():
    # Issue 47: scorecard v2 per paper in the report, each miss's class and evidence shown.
    from eventpath.report import pages
    from eventpath.report.gather import Gathered

    def row(metric, verdict, role="prediction", cls=None):
        r = {"config": "PI+R", "metric": metric, "unit": "%", "simulated": 10.0, "published": 63.0,
             "verdict": verdict, "role": role}
        if cls:
            r |= {"miss_class": cls, "miss_evidence": f"why {metric} misses"}
        return r

    doc = {"id": "es2-fig7b", "title": "t", "source": "000_8734db7c67a9fb1f", "profile": "es2", "paper": "ES2",
           "rows": [row("gain", "miss", cls="structural"), row("other", "miss"), row("base", "ok", "calibration")]}
    _, html = pages.scorecard(Gathered(docs=[doc]))
    assert "Scorecard v2, per paper" in html and "1/1 (100 %)" in html
    assert "<td>structural</td>" in html and "<td>unclassified</td>" in html
    _, page = pages.reproduction(doc)
    assert "why gain misses" in page and "why other misses" not in page
