"""The training run of the profile-guided build (``make pgo``): what users run most, through the
extension as they run it — the benchmark's busy host, every example scenario, every scenario of
the reproductions, and a short pass of one experiment per paper. Run by an instrumented build;
its counts say which branches are hot, never what the model computes."""

import sys
from pathlib import Path

from eventpath import _eventpath, api
from eventpath._eventpath import InputError

ROOT = Path(__file__).resolve().parents[1]
SHORT = 0.05


def main() -> None:
    _eventpath.bench_engine(0.2)
    _eventpath.bench_model(0.3)
    files = sorted(ROOT.glob("examples/**/*.toml")) + sorted((ROOT / "python/eventpath/reproduce/scenarios").glob("*.toml"))
    ran = 0
    for f in files:
        try:
            api.run(f, duration=SHORT)
            ran += 1
        except InputError:  # a testbed file, a profile, an intended refusal
            continue
    from eventpath.reproduce import EXPERIMENTS

    for exp in ("es2-fig7a", "elvis-fig4", "did-fig4", "sriov-fig4", "hbalance-fig7"):
        if exp in EXPERIMENTS:
            EXPERIMENTS[exp].compare(SHORT, lambda _label: None)
    print(f"pgo training: {ran} of {len(files)} scenario files ran", file=sys.stderr)


if __name__ == "__main__":
    main()
