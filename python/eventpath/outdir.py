"""An output directory that a command writes whole or not at all and never mixes with another
run's files (``compare`` and ``report`` keep theirs this way).

It is checked before anything runs: a file, or a directory holding entries the command does not
write, is refused in one line. The results are written into a hidden directory inside it and
moved into place when complete, replacing the command's earlier entries (also those the new run
does not write); a failure or Ctrl-C removes the hidden directory and leaves the rest as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from eventpath._eventpath import InputError


def check(p: str, ours: Callable[[str], bool], what: str, flag: str = "--out") -> Path:
    """``p`` as a directory a command may write: new, empty, or holding only entries for which
    ``ours`` is true. ``what`` names what the command writes ("a comparison"). Raises
    :class:`InputError` otherwise."""
    if not p.strip():
        raise InputError(f"{flag} {p!r}: not allowed; give a directory")
    out = Path(p)
    if out.exists() and not out.is_dir():
        raise InputError(f"{flag} {p}: exists and is not a directory; give a new or empty directory for {what}")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{flag} {p}: {parent} is a file, not a directory")
            break
    if out.is_dir():
        foreign = sorted(e.name for e in out.iterdir() if not ours(e.name))
        if foreign:
            shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
            raise InputError(f"{flag} {p}: holds files {what} does not write ({shown}); give an empty or new "
                             "directory, so that no result is mixed with another run's")
    return out


def made(p: str | os.PathLike, flag: str = "out") -> Path:
    """``p`` as a directory, created if need be (a run's records go straight into it); a file
    there or an unwritable place is an :class:`InputError` whose line starts with ``flag``."""
    out = Path(os.fspath(p))
    if not os.fspath(p).strip():
        raise InputError(f"{flag} {os.fspath(p)!r}: not allowed; give a directory")
    if out.exists() and not out.is_dir():
        raise InputError(f"{flag} {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{flag} {out}: cannot write there ({e.strerror or e})") from None
    return out


@contextlib.contextmanager
def staged(out: Path, prefix: str, ours: Callable[[str], bool]) -> Iterator[Path]:
    """A hidden directory (named ``prefix``…) to write in; on success its entries replace every
    earlier entry of ``out`` for which ``ours`` is true."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=out))
    except OSError as e:
        raise InputError(f"--out {out}: cannot write there ({e.strerror or e})") from None
    try:
        yield tmp
        for old in out.iterdir():
            if old != tmp and ours(old.name) and not old.name.startswith(prefix):
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        for new in tmp.iterdir():
            os.replace(new, out / new.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
