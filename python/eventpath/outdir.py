"""Where a command writes: the one set of checks of ``--out`` (and of other paths a command
writes to), so that every command refuses a bad place in the same one line before it runs.

Three kinds of place:

* :func:`writable` — a directory a command writes into beside whatever is there (``run``,
  ``sweep``, ``qos``, ``kvm``): created, and a file is written there on trial, because /proc
  and read-only mounts accept ``mkdir`` of an existing directory but no files;
* :func:`file` — one file to write (``trace --out``): its directory created, a directory in its
  place or an unwritable place refused;
* :class:`Owned` — a directory a command writes whole or not at all and never mixes with
  another run's files (``compare``, ``report``). It is checked before anything runs: a file,
  or a directory holding entries the command does not write, is refused. The results are
  written into a hidden directory inside it and moved into place when complete, replacing the
  command's earlier entries (also those the new run does not write); a failure or Ctrl-C
  removes the hidden directory and leaves the rest as it was.

Every refusal is an :class:`InputError` whose line starts with the flag and the path as given.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from eventpath._eventpath import InputError


def _not_under_a_file(p: str, path: Path, flag: str) -> None:
    """Refuse ``path`` when its nearest existing ancestor is a file (mkdir would say only
    "Not a directory")."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{flag} {p}: {parent} is a file, not a directory")
            return


def _try_a_file_in(d: Path) -> None:
    with tempfile.NamedTemporaryFile(dir=d, prefix=".eventpath-probe-"):
        pass


def writable(p: str, flag: str = "--out") -> Path:
    """``p`` as a directory, created, in which files can be written."""
    if not p.strip():
        raise InputError(f"{flag} {p!r}: not allowed; give a directory (use . for the current one)")
    out = Path(p)
    if out.exists() and not out.is_dir():
        raise InputError(f"{flag} {p}: exists and is not a directory")
    _not_under_a_file(p, out, flag)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _try_a_file_in(out)
    except OSError as e:
        raise InputError(f"{flag} {p}: cannot write there ({e.strerror or e})") from None
    return out


def file(p: str, flag: str = "--out") -> Path:
    """``p`` as a file to write: its directory is created; a directory or an unwritable place
    is refused."""
    if not p.strip():
        raise InputError(f"{flag} {p!r}: not allowed; give a file path (e.g. trace.json)")
    out = Path(p)
    if out.is_dir():
        raise InputError(f"{flag} {p}: is a directory; give the file's path (e.g. trace.json)")
    _not_under_a_file(p, out, flag)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _try_a_file_in(out.parent)
        if out.exists() and not os.access(out, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as e:
        raise InputError(f"{flag} {p}: cannot write there ({e.strerror or e})") from None
    return out


def made(p: str | os.PathLike, flag: str = "out") -> Path:
    """``p`` as a directory, created if need be (the API's ``sweep`` and ``reproduce``: a run's
    records go straight into it); a file there or an unwritable place is refused with a line
    that starts with ``flag`` (the API's argument name, ``"reproduce: out"``)."""
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


@dataclass(frozen=True)
class Owned:
    """A directory that one command owns: ``what`` names what it writes ("a comparison"),
    ``writes`` tells the names of its entries, ``prefix`` starts the hidden directory it builds
    in (an entry so named is its own too: a crashed run's leftover)."""

    what: str
    prefix: str
    writes: Callable[[str], object]

    def ours(self, name: str) -> bool:
        return bool(self.writes(name)) or name.startswith(self.prefix)

    def check(self, p: str, flag: str = "--out") -> Path:
        """``p`` as a directory the command may write: new, empty, or holding only its entries."""
        if not p.strip():
            raise InputError(f"{flag} {p!r}: not allowed; give a directory")
        out = Path(p)
        if out.exists() and not out.is_dir():
            raise InputError(f"{flag} {p}: exists and is not a directory; give a new or empty directory for "
                             f"{self.what}")
        _not_under_a_file(p, out, flag)
        if out.is_dir():
            foreign = sorted(e.name for e in out.iterdir() if not self.ours(e.name))
            if foreign:
                shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
                raise InputError(f"{flag} {p}: holds files {self.what} does not write ({shown}); give an empty or "
                                 "new directory, so that no result is mixed with another run's")
        return out

    @contextlib.contextmanager
    def staged(self, out: Path) -> Iterator[Path]:
        """A hidden directory to write in; on success its entries replace every earlier entry
        of ``out`` that is the command's."""
        try:
            out.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=self.prefix, dir=out))
        except OSError as e:
            raise InputError(f"--out {out}: cannot write there ({e.strerror or e})") from None
        try:
            yield tmp
            for old in out.iterdir():
                if old != tmp and self.ours(old.name) and not old.name.startswith(self.prefix):
                    shutil.rmtree(old) if old.is_dir() else old.unlink()
            for new in tmp.iterdir():
                os.replace(new, out / new.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
