"""A testbed scenario's text edited as the KVM experiments vary it: keys substituted in place
and the back end's tables replaced. ``kvm compare`` (its points) and
``examples/kvm/run_all.py`` (docs/kvm.md's tables) vary the same example files the same way,
so the edits live here once.

Text, not a parsed dict, because the example files are documents: their comments and their
order are what a reader of a run's ``scenario.toml`` sees.
"""

from __future__ import annotations

import json
import re


def sub(text: str, **kv) -> str:
    """``text`` with each top-level ``key = ...`` line of ``kv``'s keys set to its value (a TOML
    literal); a key that is not there raises :class:`KeyError`."""
    for k, v in kv.items():
        text, n = re.subn(rf"(?m)^{k} = .*$", f"{k} = {v}", text, count=1)
        if n != 1:
            raise KeyError(k)
    return text


def with_backend(text: str, io: dict, threads: str | None = None) -> str:
    """``text`` with its ``[backend]`` and ``[host.io]`` tables replaced: ``[host.io]`` = ``io``
    (a dict of the simulator's keys: one type in both worlds); a vhost thread is pinned to CPU 1
    with ``backend.pin``, the others run on ``host.io.cores`` (give them in ``io``);
    ``threads``: ``backend.threads`` (``per_queue``, ``shared``)."""
    head, sep, rest = text.partition("\n[[vm]]\n")
    head = re.sub(r"(?m)^\[(?:backend|host\.io)\]\n(?:(?!\[).*\n)*", "", head + "\n").rstrip("\n") + "\n"
    lines = ([f'threads = "{threads}"'] if threads else []) + (["pin = [1]"] if io["handling"] == "vhost" else [])
    if lines:
        head += "[backend]\n" + "\n".join(lines) + "\n"
    head += "[host.io]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in io.items())
    return head + sep + rest
