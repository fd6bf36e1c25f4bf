"""The report's directory, kept as ``compare``'s is (``eventpath.compare.outdir``): checked
before anything runs, written whole or not at all, never mixed with another run's files.

The site is built in a hidden directory inside ``--out`` and moved into place when it is
complete; a failure or Ctrl-C removes it and leaves the directory as it was. A directory
holding anything a report does not write is refused (``eventpath run``'s summary.json, a
comparison); an earlier report is replaced whole, so no page of it is left behind.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from eventpath import outdir as shared

#: What a report writes at the top of its directory: its pages, its manifest and the folders
#: of what it shows (the reproductions, the head-to-head, the testbed comparison).
_NAMES = re.compile(r"(index|scorecard|compare|kvm|profiles|repro-[\w.+-]+)\.html|report\.json|reproduce|compare|kvm")
_TMP_PREFIX = ".report-"


def _ours(name: str) -> bool:
    return bool(_NAMES.fullmatch(name)) or name.startswith(_TMP_PREFIX)


def check(p: str, flag: str = "--out") -> Path:
    """``--out`` as a directory a report may write; raises :class:`InputError` otherwise."""
    return shared.check(p, _ours, "a report", flag)


def staged(out: Path) -> contextlib.AbstractContextManager[Path]:
    """A directory to build the site in; on success it replaces ``out``'s earlier report."""
    return shared.staged(out, _TMP_PREFIX, _ours)
