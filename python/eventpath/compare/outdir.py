"""The output directory of a comparison: checked before anything runs, written whole or not at
all, never mixed with another run's files.

Everything is written into a hidden directory inside ``--out`` first and moved into place when
the comparison has finished; a failure or Ctrl-C removes it and leaves the directory as it was.
A directory that holds files a comparison does not write is refused (a comparison never mixes
with a ``run``'s or a ``sweep``'s); an earlier comparison's files are replaced — also a figure
the new one does not draw (``--no-plots``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from eventpath import outdir as shared
from eventpath.version import provenance  # noqa: F401  (compare's outputs record it)

#: Every file a comparison writes.
FILES = ("compare.json", "ranked.csv", "ranked.parquet", "cells.csv", "pareto.png")
_TMP_PREFIX = ".compare-"


def _ours(name: str) -> bool:
    return name in FILES or name.startswith(_TMP_PREFIX)


def check(p: str) -> Path:
    """``--out`` as a directory a comparison may write; raises :class:`InputError` otherwise."""
    return shared.check(p, _ours, "a comparison")


def staged(out: Path) -> contextlib.AbstractContextManager[Path]:
    """A directory to write the results in; on success they replace ``out``'s comparison files."""
    return shared.staged(out, _TMP_PREFIX, _ours)
