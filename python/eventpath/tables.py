"""Writing tidy tables as CSV (loads directly in pandas and polars)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable


def write_csv(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows (dicts with the same keys) to ``path``; ``None`` becomes an empty cell."""
    rows = list(rows)
    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
