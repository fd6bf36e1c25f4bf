"""The commands that show rather than study: ``keys`` (every scenario key with its type, unit,
default and meaning), ``profiles`` (the built-in profiles, or every value of one with its unit
and source), ``bench`` (the engine's speed beside a SimPy twin's) and ``demo``.
"""

from __future__ import annotations

import json
import shutil

from eventpath import outdir
from eventpath.cli.common import UsageError, seconds

#: `profiles NAME`: the widest value column before a longer value pushes the rest of its row right.
PROFILE_VALUE_WIDTH = 12


def add_keys(sub) -> None:
    ky = sub.add_parser("keys", help="every scenario key with its type, unit, default and meaning")
    ky.add_argument("prefix", nargs="?", help="only this key, section (host.io, vm.net) or workload / moderation "
                    "kind (memcached, air)")
    ky.add_argument("--json", action="store_true", help="print a JSON list")
    ky.set_defaults(fn=cmd_keys)


def add_profiles(sub) -> None:
    pr = sub.add_parser("profiles", help="list the built-in profiles, or every value of one with unit and source")
    pr.add_argument("name", nargs="?", help="a built-in profile (or a profile .toml): print every value with its "
                    "unit, free range and source")
    pr.add_argument("--full", action="store_true", help="whole sources, wrapped (default: cut to the terminal width)")
    pr.set_defaults(fn=cmd_profiles)


def add_bench(sub) -> None:
    b = sub.add_parser("bench", help="engine events/s vs a SimPy model of the same event path, and the full model's")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--seconds", type=seconds, default=1.0, help="simulated seconds for our engine")
    b.add_argument("--simpy-seconds", type=seconds, default=0.01, help="simulated seconds for SimPy")
    b.add_argument("--model-seconds", type=seconds, default=0.2,
                   help="simulated seconds of the full model (14 VMs x TCP on elvis); 0 skips it")
    b.add_argument("--by-kind", action="store_true",
                   help="also count the full model's events by kind, per delivered packet (one more run)")
    b.add_argument("--matrix", action="store_true",
                   help="also time the README's four-workload comparison on every core (minutes)")
    b.set_defaults(fn=cmd_bench)


def add_demo(sub) -> None:
    d = sub.add_parser("demo", help="run the default scenario at several rates: table + figure")
    d.add_argument("--out", default="out/demo", help="output directory")
    d.set_defaults(fn=cmd_demo)


def cmd_keys(a) -> int:
    import textwrap

    from eventpath import api

    keys = api.keys()
    if a.prefix is not None:
        want = a.prefix.strip()
        keys = [k for k in keys if k["key"] == want or k["key"].startswith(want.rstrip(".") + ".") or k["kind"] == want]
        if not want or not keys:
            tops = sorted({k["key"].split(".")[0] for k in api.keys()})
            kinds = sorted({k["kind"] for k in api.keys() if k["kind"]})
            raise UsageError(f"keys {a.prefix!r}: no scenario key is or starts with that; give a key or section "
                             f"({', '.join(tops)}), or a workload or moderation kind ({', '.join(kinds)})")
    if a.json:
        print(json.dumps(keys, indent=2))
        return 0
    width = max(shutil.get_terminal_size().columns, 60)
    for k in keys:
        kind = f"  [kind = \"{k['kind']}\"]" if k["kind"] else ""
        unit = f", {k['unit']}" if k["unit"] else ""
        default = k["default"] if k["default"].startswith("absent: ") else f"default: {k['default']}"
        print(f"{k['key']}{kind}  {k['type']}{unit}; {default}")
        for line in textwrap.wrap(k["meaning"], width - 4):
            print(f"    {line}")
    return 0


def cmd_profiles(a) -> int:
    from eventpath import api

    if a.name is None:
        for name, desc in api.profiles():
            print(f"{name:8s} {desc}")
        return 0
    print_profile(api.profile(a.name), full=a.full)
    return 0


def print_profile(p: dict, full: bool = False, width: int | None = None) -> None:
    """Every value of a profile, one row per dotted key: value, unit and source, a free
    parameter's range and prior before its source (like ns-3's PrintAttributes). The source is cut
    to the terminal's width (``...``) unless ``full``, which wraps it whole under its column."""
    import textwrap

    from eventpath import profile_values

    width = width or shutil.get_terminal_size().columns
    rows = [(v.key, profile_values.exact(v.value), v.unit,
             (f"[{profile_values.free_note(v.free)}] " if v.free else "") + v.source
             + (f" [range {v.range['min']:g}..{v.range['max']:g}]" if v.range else ""))
            for v in profile_values.values(p)]
    head = ("key", "value", "unit", "source")
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    w[1] = min(w[1], PROFILE_VALUE_WIDTH)
    indent = sum(w) + 6  # where the source column starts
    for r in [head, *rows]:
        left = "  ".join(c.ljust(w[i]) for i, c in enumerate(r[:3])) + "  "
        room = max(width - len(left), 24)
        src = r[3]
        if full:
            # A value wider than its column gets its row to itself; the source follows in its column.
            if len(left) > indent and src:
                print(left.rstrip())
                left = " " * indent
            lines = textwrap.wrap(src, max(width - indent, 24)) or [""]
            print((left + lines[0]).rstrip())
            for line in lines[1:]:
                print(" " * indent + line)
        else:
            print((left + (src if len(src) <= room else src[: room - 3] + "...")).rstrip())


def cmd_bench(a) -> int:
    from eventpath import bench

    for flag, v, lo, hi, why in (("--seconds", a.seconds, 1e-3, 3600.0, "simulated seconds of our engine"),
                                 ("--simpy-seconds", a.simpy_seconds, 1e-4, 1.0,
                                  "simulated seconds of SimPy, which runs ~100x slower"),
                                 ("--model-seconds", a.model_seconds, 0.0, 60.0,
                                  "simulated seconds of the full model; 0 skips it")):
        if not lo <= v <= hi:  # also NaN
            raise UsageError(f"{flag} {v:g}: not allowed; expected {lo:g}..={hi:g} ({why})")
    res = bench.run(sim_seconds=a.seconds, simpy_seconds=a.simpy_seconds, model_seconds=a.model_seconds,
                    by_kind=a.by_kind)
    if a.matrix:
        res.update(bench.matrix())
    if a.json:
        print(json.dumps(res))
    else:
        bench.print_result(res)
    return 0


def cmd_demo(a) -> int:
    from eventpath import demo

    demo.run(outdir.writable(a.out))
    return 0
