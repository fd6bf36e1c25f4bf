"""What produced an output: eventpath's version (the installed package's) and, in a git
checkout, its commit and whether it had uncommitted changes — for ``--version``,
``eventpath.__version__`` and the provenance every output directory records."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path


def version() -> str | None:
    """The installed package's version, or None when it is not installed (run from a tree)."""
    try:
        return metadata.version("eventpath")
    except metadata.PackageNotFoundError:
        return None


def provenance() -> dict:
    """eventpath's version and, in a git checkout, its commit."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here, capture_output=True,
                                    text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    return {"version": version(), "commit": commit, "uncommitted_changes": dirty}


def describe() -> str:
    """One line for ``eventpath --version``: the version, and the commit where there is one."""
    p = provenance()
    where = f"commit {p['commit'][:12]}{' with uncommitted changes' if p['uncommitted_changes'] else ''}" if p["commit"] else "not a git checkout"
    return f"eventpath {p['version'] or 'unknown (not installed)'} ({where})"


def build() -> dict:
    """What decides a run's result besides its input: :func:`provenance` and a digest of the
    compiled simulator (which a rebuild without a commit changes). Part of a sweep run's identity."""
    import hashlib

    from eventpath import _eventpath

    with open(_eventpath.__file__, "rb") as f:
        engine = hashlib.sha256(f.read()).hexdigest()[:16]
    return {**provenance(), "engine": engine}
