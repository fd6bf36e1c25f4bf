"""Where the simulations of ``sweep``, ``compare``, ``reproduce`` and ``calibrate`` run: in this
process, in this machine's worker processes (``--workers N``), or on a Dask cluster
(``--scheduler tcp://HOST:PORT``) — and the one progress display they all show.

A job is ``fn(*args)``: ``fn`` a top-level function of eventpath, pickled by reference (a worker
imports it from its own eventpath), ``args`` plain data. Results come back as jobs finish
(:meth:`Executor.map`) or in job order (:meth:`Executor.ordered`); a result does not depend on
where its job ran, as a run is deterministic given its scenario, seed and duration.

Why Dask distributed and not Ray: both are existing engines that need no cluster code of ours,
but Dask is pure-Python wheels (``pip install 'eventpath[cluster]'``), its scheduler and
workers are two commands (``dask scheduler``; ``dask worker tcp://HOST:8786`` on each machine),
a test starts a ``LocalCluster`` in a second, and ``Client(address, timeout=…)`` fails within
the timeout on an address where nothing answers. Ray's wheels are hundreds of MB and start a
raylet and an object store per machine, which jobs of a few milliseconds to seconds, passing
dicts of a few kB, do not need.

A cluster's workers must run the same eventpath (version and commit) as the client: a run's
identity (``eventpath.sweep.run_id``) records the client's build, so results of another build
would be filed under the wrong one. :func:`dask` checks every worker present when it connects.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Iterator, Sequence

from eventpath._eventpath import InputError

#: Seconds a Dask scheduler (and its first worker) has to answer before ``--scheduler`` fails.
CONNECT_TIMEOUT_S = 10.0

Job = Sequence[Any]


class Progress:
    """A bar on a terminal (tqdm); elsewhere (a log, CI, a pipe) one line on stderr per
    finished job: ``DESC: DONE/TOTAL UNITs (LABEL)``."""

    def __init__(self, total: int, desc: str, unit: str, initial: int = 0):
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=None, file=sys.stderr)
        self.lines = bool(self.bar.disable)
        self.done, self.total, self.desc, self.unit = initial, total, desc, unit

    def update(self, n: int = 1, label: str | None = None) -> None:
        self.done += n
        if self.lines:
            print(f"{self.desc}: {self.done}/{self.total} {self.unit}s" + (f" ({label})" if label else ""),
                  file=sys.stderr, flush=True)
        else:
            if label:
                self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(n)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Executor:
    """Runs jobs; use as a context manager (closing stops the jobs not yet finished)."""

    #: Jobs that run at once (a cluster's worker threads when it connected).
    slots: int = 1
    #: Where jobs run, in words.
    where: str = "this process"
    #: Jobs run in this process, one after the other (a caller may then report inside a job).
    in_process: bool = True

    def map(self, fn: Callable[..., Any], jobs: Sequence[Job]) -> Iterator[tuple[int, Any]]:
        """``(index into jobs, fn(*job))`` for every job, as each finishes. A job's exception is
        raised here; leaving the loop early (an exception, Ctrl-C) cancels the jobs not started."""
        for i, job in enumerate(jobs):  # in this process: no pool to start, and Ctrl-C stops at once
            yield i, fn(*job)

    def ordered(self, fn: Callable[..., Any], jobs: Sequence[Job]) -> Iterator[Any]:
        """``fn(*job)`` for every job in job order, each as soon as it and every job before it
        have finished."""
        held: dict[int, Any] = {}
        nxt = 0
        for i, r in self.map(fn, jobs):
            held[i] = r
            while nxt in held:
                yield held.pop(nxt)
                nxt += 1

    def close(self) -> None:
        pass

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Local(Executor):
    """This machine's worker processes (``concurrent.futures``), started at the first job."""

    in_process = False

    def __init__(self, workers: int):
        self.slots, self.where, self.pool = workers, f"{workers} local processes", None

    def map(self, fn, jobs):
        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=self.slots)
        futs = {self.pool.submit(fn, *job): i for i, job in enumerate(jobs)}
        try:
            for f in as_completed(futs):
                yield futs[f], f.result()
        except BaseException:  # bad input, Ctrl-C, or the caller stopped reading: start no more
            for f in futs:
                f.cancel()
            raise

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


class _Dask(Executor):
    """A Dask distributed cluster, through a :class:`distributed.Client`."""

    in_process = False

    def __init__(self, client, distributed):
        self.client, self.distributed = client, distributed
        self.slots = max(1, sum(client.nthreads().values()))
        self.where = f"Dask at {client.scheduler.address} ({self.slots} worker threads)"

    def map(self, fn, jobs):
        futs = [self.client.submit(fn, *job, pure=False) for job in jobs]
        index = {f.key: i for i, f in enumerate(futs)}
        try:
            for f in self.distributed.as_completed(futs, loop=self.client.loop):
                yield index[f.key], f.result()
        except BaseException:
            self.client.cancel(futs)
            raise

    def close(self) -> None:
        self.client.close()


def local(workers: int | None = None, jobs: int | None = None) -> Executor:
    """``workers`` processes on this machine (default: every core; no more than ``jobs``); one
    worker runs the jobs in this process."""
    n = workers or os.cpu_count() or 1
    if jobs is not None:
        n = min(n, max(jobs, 1))
    return Executor() if n <= 1 else _Local(n)


def _build() -> dict:
    """This eventpath's version and commit (run on a worker to compare with the client's)."""
    from eventpath.version import provenance

    p = provenance()
    return {"version": p["version"], "commit": p["commit"]}


def dask(address: str, timeout: float | None = None) -> Executor:
    """Connect to the Dask scheduler at ``address`` (``tcp://HOST:PORT``). Nothing answering
    within ``timeout`` seconds (default :data:`CONNECT_TIMEOUT_S`), no worker, or a worker on
    another eventpath build is an :class:`InputError`."""
    import logging

    from eventpath.extras import need

    distributed = need("distributed", "cluster", "--scheduler (a Dask cluster)")
    timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
    flag = f"--scheduler {address}"
    if not isinstance(address, str) or not address.strip():
        raise InputError(f"{flag!r}: not allowed; expected a Dask scheduler's address, e.g. tcp://HOST:8786")
    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # the failure is said once, below, not as a logged trace
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        why = " ".join(str(e).split()) or type(e).__name__
        raise InputError(f"{flag}: no Dask scheduler answered within {timeout:g} s ({why}); start one with "
                         "`dask scheduler` and workers with `dask worker ADDRESS`, or check the address") from None
    finally:
        quiet.setLevel(level)
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            raise InputError(f"{flag}: the scheduler has no worker (none joined within {timeout:g} s); start "
                             f"some with `dask worker {address}`") from None
        mine = _build()
        try:
            theirs = client.run(_build)
        except Exception as e:  # a worker that cannot import eventpath
            raise InputError(f"{flag}: a worker cannot run eventpath ({type(e).__name__}: "
                             f"{' '.join(str(e).split())}); install this eventpath on every worker") from None
        for worker, b in sorted(theirs.items()):
            if b != mine:
                raise InputError(f"{flag}: worker {worker} runs eventpath {b['version']} at commit {b['commit']}, "
                                 f"this is {mine['version']} at commit {mine['commit']}; install the same build "
                                 "on every worker")
        return _Dask(client, distributed)
    except BaseException:
        client.close()
        raise


def start(scheduler: str | None, workers: int | None, jobs: int | None = None) -> Executor:
    """The executor a command's ``--scheduler`` / ``--workers`` name: a Dask cluster, or local
    processes (:func:`local`)."""
    if scheduler is not None:
        if workers is not None:
            raise InputError(f"--workers {workers} with --scheduler {scheduler}: give one; --workers counts "
                             "this machine's processes, a cluster runs as many jobs as its workers have threads")
        return dask(scheduler)
    return local(workers, jobs)
