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
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from eventpath._eventpath import InputError
from eventpath.version import provenance  # noqa: F401  (compare's outputs record it)

#: Every file a comparison writes.
FILES = ("compare.json", "ranked.csv", "ranked.parquet", "cells.csv", "pareto.png")
_TMP_PREFIX = ".compare-"


def check(p: str) -> Path:
    """``--out`` as a directory a comparison may write; raises :class:`InputError` otherwise."""
    if not p.strip():
        raise InputError(f"--out {p!r}: not allowed; give a directory")
    out = Path(p)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {p}: exists and is not a directory")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"--out {p}: {parent} is a file, not a directory")
            break
    if out.is_dir():
        foreign = sorted(e.name for e in out.iterdir() if e.name not in FILES and not e.name.startswith(_TMP_PREFIX))
        if foreign:
            shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
            raise InputError(f"--out {p}: holds files a comparison does not write ({shown}); give an empty or new "
                             "directory, so that no result is mixed with another run's")
    return out


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A directory to write the results in; on success they replace ``out``'s comparison files."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=out))
    except OSError as e:
        raise InputError(f"--out {out}: cannot write there ({e.strerror or e})") from None
    try:
        yield tmp
        for name in FILES:
            if (tmp / name).exists():
                os.replace(tmp / name, out / name)
            elif (out / name).exists():
                (out / name).unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
