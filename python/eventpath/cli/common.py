"""What every command of the command line shares: its exit codes, its one-line usage error, and
the checks of the options several commands take (seeds, seconds, ``--workers`` /
``--scheduler``), so that the same option is read and refused the same way everywhere.

The command families (``run.py``, ``show.py``, ``experiments.py``, ``search.py``, ``kvm.py``)
import this module and nothing of each other; the package's ``__init__`` puts them together.
"""

from __future__ import annotations

import argparse

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_PROBE_REFUSED = 3  # `kvm probe`: finished, but the outlier rule refused a parameter (docs/kvm.md)
# Most worker processes of `sweep`, `compare`, `reproduce`, `calibrate`, `report`.
MAX_WORKERS = 1024


class UsageError(Exception):
    """A command-line argument is wrong."""


class Parser(argparse.ArgumentParser):
    # argparse prints usage plus a message over two lines; we want one clear line.
    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


def seconds(s: str) -> float:
    """A number of seconds. Its range is checked where it is used: for ``--duration``, once, by
    the simulator, exactly as a scenario's ``duration_s`` is."""
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a number of seconds") from None


def seed(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"{s} is not allowed; expected 0 ≤ seed < 2^64")
    return v


def seed_list(text: str) -> list[int]:
    """``--seeds 1,2,3``: comma-separated integers 0 ≤ seed < 2^64, at least one, no repeats."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise UsageError(f"--seeds {text!r}: not allowed; expected comma-separated integers, e.g. 1,2,3")
    seeds = []
    for p in parts:
        try:
            seeds.append(seed(p))
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"--seeds {text}: {e}") from None
    if len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds {text}: a seed is given twice; each run of the grid must differ")
    return seeds


def check_duration(duration: float | None) -> None:
    """``--duration`` checked as every run checks it, before a command starts anything."""
    if duration is not None:
        from eventpath import _eventpath

        _eventpath.check_duration("--duration", duration)


def add_workers(p: argparse.ArgumentParser, help: str = "worker processes (default: all cores)") -> None:
    """``--workers N`` and ``--scheduler ADDRESS``: where a command's many runs go."""
    p.add_argument("--workers", type=int, help=help)
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on this Dask scheduler's workers instead of local processes (eventpath[cluster]; "
                        "the README's 'Sweeps on a cluster')")


def check_workers(a) -> None:
    """``--workers`` (local processes) and ``--scheduler`` (a Dask cluster's): one or the other."""
    if a.workers is not None and not 1 <= a.workers <= MAX_WORKERS:
        raise UsageError(f"--workers {a.workers}: not allowed; expected 1..={MAX_WORKERS} processes")
    if a.workers is not None and a.scheduler is not None:
        raise UsageError(f"--workers {a.workers} with --scheduler {a.scheduler}: give one; --workers counts this "
                         "machine's processes, a cluster runs as many jobs at once as its workers have threads")


def command_line(a, default: list[str]) -> list[str]:
    """The command line as typed (``main`` keeps it in ``a.argv``), or ``default`` where a
    caller built the namespace itself."""
    return getattr(a, "argv", None) or default
