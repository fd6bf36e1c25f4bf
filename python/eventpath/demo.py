"""The demonstration: the default scenario (a VM sending 512-byte UDP through virtio-net) at
several send rates, a comparison table, and an exit-breakdown figure."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from eventpath import api
from eventpath.plots import exit_breakdown_figure

DEFAULT_SCENARIO = Path(__file__).parent / "scenarios" / "default.toml"
RATES = [20_000, 50_000, 100_000, None]


def run(out: Path) -> list[dict]:
    from tqdm import tqdm

    base = tomllib.loads(DEFAULT_SCENARIO.read_text())
    rows, labels, exits = [], [], []
    for rate in tqdm(RATES, desc="demo", unit="run", leave=False, disable=None):
        sc = json.loads(json.dumps(base))
        wl = sc["vm"][0]["workload"]
        if rate is None:
            wl.pop("rate_pps", None)
        else:
            wl["rate_pps"] = rate
        vm = api.run(sc).summary["vms"][0]
        label = "max" if rate is None else f"{rate // 1000}K/s"
        labels.append(label)
        exits.append(vm["exits_per_s"])
        rows.append({"offered": label, "exits_per_s": vm["exits_total_per_s"], "kicks_per_s": vm["kicks_per_s"],
                     "eht_pct": vm["eht_pct"], "gbps": vm["throughput"]["gbps"], "p99_us": vm["latency_us"]["p99"]})
    print(f"{base['name']}: one VM sending {base['vm'][0]['workload']['message_bytes']}-byte UDP "
          f"on profile {base['profile']}")
    print(f"{'offered':>8s} {'exits/s':>10s} {'kicks/s':>10s} {'EHT %':>6s} {'Gbit/s':>7s} {'p99 us':>8s}")
    for r in rows:
        print(f"{r['offered']:>8s} {r['exits_per_s']:10,.0f} {r['kicks_per_s']:10,.0f} {r['eht_pct']:6.1f} "
              f"{r['gbps']:7.3f} {r['p99_us']:8.1f}")
    fig = out / "demo-exits.png"
    exit_breakdown_figure(labels, exits, fig, "VM exits by reason vs offered UDP rate (512 B)")
    (out / "demo.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {fig} and {out / 'demo.json'}")
    return rows
