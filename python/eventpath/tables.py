"""Writing tidy tables as CSV (loads directly in pandas and polars), and as Parquet beside it
where pyarrow is installed (the ``cluster`` extra)."""

from __future__ import annotations

import csv
import importlib.util
import os
import secrets
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


def parquet_available() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def write_parquet(path: Path, rows: Iterable[dict[str, Any]], cols: list[str] | None = None) -> bool:
    """Write rows to ``path`` as Parquet (written beside and renamed into place, so a reader
    never sees half a file); False, writing nothing, where pyarrow is not installed.

    The columns and values are the CSV's: ``None`` is null, a number or a string keeps its type
    (a column of ints and floats is float), and a value CSV writes with ``str()`` (a list such
    as ``host.io.cores``, a dict, a column mixing strings and numbers) is that string."""
    if not parquet_available():
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(rows)
    if cols is None:
        cols = []
        for r in rows:
            cols.extend(k for k in r if k not in cols)
    arrays = []
    for c in cols:
        vals = [r.get(c) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if kinds and (kinds <= {int, float} or len(kinds) == 1 and kinds <= {bool, str}):
            arrays.append(pa.array(vals, type=pa.float64() if float in kinds else None))
        else:
            arrays.append(pa.array([None if v is None else str(v) for v in vals], type=pa.string()))
    tmp = temp_beside(path)
    pq.write_table(pa.Table.from_arrays(arrays, names=cols), tmp)
    os.replace(tmp, path)
    return True


def temp_beside(path: Path) -> Path:
    """A new hidden file beside ``path`` for writing it whole, then renaming it into place
    (``os.replace``): ``.NAME.PID.RANDOM.tmp``, created here (``O_EXCL``). Its name is this
    writer's own, so two processes (or threads) writing one file at once each rename their own
    whole file, the last one winning, and never rename the other's away. A writer killed before
    its rename leaves its hidden file behind; nothing reads it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    open(tmp, "x").close()  # made with the umask's permissions, as a plain write's file would be
    return tmp
