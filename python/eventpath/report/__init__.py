"""``eventpath report --out DIR``: one static HTML site of everything eventpath can show
(issue 29 item 2) — the reproduction scorecard (calibration and prediction per profile, every
row simulated beside published with its verdict), every reproduction's figure, the
head-to-head of every mechanism, which switch pays on the README's cloud host (``advise``), the testbed beside its simulator twins where ``/dev/kvm`` is
usable, and every profile value with its unit and source.

No server and no script: HTML pages, PNG figures (drawn by the commands' own figure code) and
the JSON they were made from, in one directory that opens from the disk. Every page says how it
was made (eventpath's version and commit, the command line, the date). :mod:`.gather` gathers,
:mod:`.pages` lays out, :mod:`.html` writes, :data:`OUT` keeps the directory whole.
"""

from __future__ import annotations

import datetime
import json
import re
from html import escape
from pathlib import Path
from typing import Callable

from eventpath import outdir
from eventpath.report import gather
from eventpath.report import html, pages
from eventpath.version import provenance

#: What a report writes at the top of its directory: its pages, its manifest and the folders
#: of what it shows (the reproductions, the head-to-head, the testbed comparison).
_NAMES = re.compile(r"(index|scorecard|compare|advise|kvm|profiles|repro-[\w.+-]+)\.html|report\.json|reproduce|compare|advise|kvm")
#: A report's ``--out``, kept as a comparison's is (:class:`eventpath.outdir.Owned`): checked
#: before anything runs, built in a hidden directory and moved into place when complete, never
#: mixed with another run's files (``eventpath run``'s summary.json, a comparison is refused); an
#: earlier report is replaced whole, so no page of it is left behind.
OUT = outdir.Owned("a report", ".report-", _NAMES.fullmatch)


def build(out: Path, *, quick: bool = False, no_kvm: bool = False, compare_dir: Path | None = None,
          reproduce_dir: Path | None = None, kvm_dir: Path | None = None, advise_dir: Path | None = None,
          workers: int | None = None,
          command: str = "eventpath report", say: Callable[[str], None] = print, scheduler: str | None = None) -> dict:
    """Build the site into ``out`` (checked with ``OUT.check`` by the caller before
    anything runs); return its manifest (``report.json``). The runs go to ``workers`` local
    processes, or to the Dask scheduler at ``scheduler``."""
    prov = provenance()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    made = (f"Made by <code>{escape(command)}</code> on {when} with eventpath {escape(str(prov['version']))}"
            + (f", commit {escape(prov['commit'][:12])}" if prov["commit"] else "")
            + (" (with uncommitted changes)" if prov["uncommitted_changes"] else "") + ".")
    with OUT.staged(out) as site:
        g = gather.reproductions(site, quick, reproduce_dir, workers, say, scheduler)
        gather.head_to_head(site, g, quick, compare_dir, workers, say, scheduler)
        gather.advice(site, g, quick, advise_dir, workers, say, scheduler)
        gather.testbed(site, g, quick, no_kvm, kvm_dir, say)
        body: dict[str, tuple[str, str]] = {"scorecard.html": pages.scorecard(g)}
        body.update({pages.repro_page(d): pages.reproduction(d) for d in g.docs})
        if g.compare is not None:
            body["compare.html"] = pages.compare(g.compare)
        if g.advise is not None:
            body["advise.html"] = pages.advise(g.advise)
        if g.kvm:
            body["kvm.html"] = pages.kvm(g)
        body["profiles.html"] = pages.profiles(gather.profiles())
        listed = {f: t for f, (t, _) in body.items()}
        body = {"index.html": pages.index(g, listed, quick), **body}
        for f, (title, text) in body.items():
            (site / f).write_text(html.page(title, f, text, made, body))
        manifest = {"command": command, "date": when, **prov, "quick": quick, "pages": list(body),
                    "made": g.notes + [f"testbed: {g.kvm_note}"], "missing_experiments": g.missing}
        (site / "report.json").write_text(json.dumps(manifest, indent=2) + "\n")
    say(f"wrote {out}/index.html and {len(body) - 1} more pages")
    return manifest
