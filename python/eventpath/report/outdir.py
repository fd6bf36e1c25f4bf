"""The report's directory, kept as ``compare``'s is (``eventpath.compare.outdir``): checked
before anything runs, written whole or not at all, never mixed with another run's files.

The site is built in a hidden directory inside ``--out`` and moved into place when it is
complete; a failure or Ctrl-C removes it and leaves the directory as it was. A directory
holding anything a report does not write is refused (``eventpath run``'s summary.json, a
comparison); an earlier report is replaced whole, so no page of it is left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from eventpath._eventpath import InputError

#: What a report writes at the top of its directory: its pages, its manifest and the folders
#: of what it shows (the reproductions, the head-to-head, the testbed comparison).
_NAMES = re.compile(r"(index|scorecard|compare|kvm|profiles|repro-[\w.+-]+)\.html|report\.json|reproduce|compare|kvm")
_TMP_PREFIX = ".report-"


def _ours(name: str) -> bool:
    return bool(_NAMES.fullmatch(name)) or name.startswith(_TMP_PREFIX)


def check(p: str, flag: str = "--out") -> Path:
    """``--out`` as a directory a report may write; raises :class:`InputError` otherwise."""
    if not p.strip():
        raise InputError(f"{flag} {p!r}: not allowed; give a directory")
    out = Path(p)
    if out.exists() and not out.is_dir():
        raise InputError(f"{flag} {p}: exists and is not a directory; give a new or empty directory for the report")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{flag} {p}: {parent} is a file, not a directory")
            break
    if out.is_dir():
        foreign = sorted(e.name for e in out.iterdir() if not _ours(e.name))
        if foreign:
            shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
            raise InputError(f"{flag} {p}: holds files a report does not write ({shown}); give an empty or new "
                             "directory, so that no page shows another run's results")
    return out


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A directory to build the site in; on success it replaces ``out``'s earlier report."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=out))
    except OSError as e:
        raise InputError(f"--out {out}: cannot write there ({e.strerror or e})") from None
    try:
        yield tmp
        for old in out.iterdir():
            if old != tmp and _ours(old.name) and not old.name.startswith(_TMP_PREFIX):
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        for new in tmp.iterdir():
            os.replace(new, out / new.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
