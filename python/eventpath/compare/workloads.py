"""What a comparison runs the mechanisms on: the user's scenario, or named workloads placed on
a profile's host.

A named workload is a scenario workload ``kind`` (the schema's own list,
:func:`eventpath.compare.seams.workload_kinds`) with its parameters: ``kind`` alone takes the
defaults below for the parameters a kind requires, ``kind:key=value:key=value`` sets them. It
runs in one VM of :data:`VCPUS` vCPUs pinned to the first pCPUs, so that interrupt routing has
a vCPU to choose.
"""

from __future__ import annotations

import math
import tomllib
from typing import Any

from eventpath._eventpath import InputError
from eventpath.compare import seams

#: vCPUs of the VM a named workload runs in: two, the fewest that give routing a choice.
VCPUS = 2

#: Parameters a kind requires, where a benchmark's own default answers them.
DEFAULTS: dict[str, dict[str, Any]] = {
    # netperf TCP_STREAM / TCP_MAERTS: the send and receive size default to the socket buffer's,
    # 16 KB on Linux.
    "tcp_stream": {"message_bytes": 16384},
    "tcp_receive": {"message_bytes": 16384},
    # netperf TCP_RR / UDP_RR: one-byte request and response.
    "tcp_rr": {"request_bytes": 1, "response_bytes": 1},
    "udp_rr": {"request_bytes": 1, "response_bytes": 1},
    # memaslap: --concurrency defaults to 16.
    "memcached": {"concurrency": 16},
    # webbench 1.5: -c (clients) defaults to 1.
    "webbench": {"clients": 1},
}


def check_warmup(profile: str, warmup: float) -> None:
    """``--warmup`` checked as the simulator checks a scenario's ``warmup_s``, named as the option."""
    if not math.isfinite(warmup):
        raise InputError(f"--warmup {warmup}: not allowed; expected a finite number of seconds")
    why = seams.refusal({"name": "w", "profile": profile, "warmup_s": warmup, "vm": [{"name": "v", "vcpus": 1}]})
    if why and "`warmup_s`" in why:
        raise InputError(f"--warmup {warmup:g}: {why.split('`warmup_s`: ', 1)[1]}")


def parse(spec: str, known: list[str]) -> tuple[str, dict[str, Any]]:
    """``memcached:concurrency=64`` → (label, workload table). Values are TOML literals."""
    kind, *params = spec.strip().split(":")
    if kind not in known:
        raise InputError(f"--workloads {spec}: unknown workload {kind!r}; expected one of {', '.join(known)} "
                         "(with parameters as kind:key=value:key=value)")
    table: dict[str, Any] = {"kind": kind, **DEFAULTS.get(kind, {})}
    for p in params:
        key, eq, text = p.partition("=")
        if not eq or not key.strip() or not text.strip():
            raise InputError(f"--workloads {spec}: {p!r} is not key=value (e.g. memcached:concurrency=64)")
        try:
            table[key.strip()] = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            table[key.strip()] = text.strip()
    return spec.strip(), table


def scenario(profile: str, label: str, workload: dict[str, Any], duration: float, warmup: float) -> dict:
    """One VM of :data:`VCPUS` vCPUs running ``workload`` on ``profile``'s host."""
    return {"name": label.replace(":", "_").replace("=", "-"), "profile": profile, "duration_s": duration,
            "warmup_s": warmup,
            "vm": [{"name": "vm0", "vcpus": VCPUS, "vcpu_pins": list(range(VCPUS)), "workload": dict(workload)}]}


def named(profile: str, specs: list[str], duration: float, warmup: float) -> dict[str, dict]:
    """``{label: scenario}`` for workload specs; a spec the checker refuses is an :class:`InputError`."""
    if not specs:
        raise InputError("--workloads: give at least one workload, e.g. tcp_stream,tcp_receive,memcached,tcp_rr")
    probe = scenario(profile, "probe", {"kind": "tcp_rr"}, duration, warmup)
    known = seams.workload_kinds(probe)
    out = {}
    for spec in specs:
        label, table = parse(spec, known)
        if label in out:
            raise InputError(f"--workloads: {label} is named twice")
        sc = scenario(profile, label, table, duration, warmup)
        why = seams.refusal(sc)
        if why:
            raise InputError(f"--workloads {spec}: {why.split(': ', 1)[-1]}")
        out[label] = sc
    return out
