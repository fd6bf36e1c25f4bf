"""The scenario/profile parser fuzzer's parts (tests/python/test_fuzz.py): seeded mutations of
TOML documents and texts, a TOML writer for the mutated documents, and the runner that executes
cases in a child process (so that a hang or an abort is caught and named, not a stuck test run).

Run as a script, it is that child: ``python fuzzlib.py CASES.json RESULTS.jsonl``.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# Values a mutation puts in place of another: every TOML type, and the numbers that break
# careless code (zero, negatives, NaN, infinities, 32/64-bit edges, huge and tiny).
EXTREMES: list[Any] = [0, -1, 1, 0.5, -0.0, 1e-300, 1e300, -1e300, 2**31, 2**32, 4294967296, 2**53 + 1,
                       2**63 - 1, -(2**63), float("nan"), float("inf"), float("-inf"), 1e18, 1e6, 65536, 1e-9]
OTHERS: list[Any] = ["", "x", "es2", "elvis", "udp_stream", "posted", "\u00e9\u4e2d", "a\nb", "x" * 3000, True, False,
                     [], [1, 2], ["a"], [{}], {}, {"a": 1}, {"kind": "udp_stream"}]


def toml_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    return out.replace("\x7f", "\\u007F")


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_string(k)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def dumps(doc: dict) -> str:
    """A TOML document: one `key = value` line per top-level key, nested tables inline."""
    return "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in doc.items())


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path (dict keys and list indices) in a document."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        out.append(prefix + (k,))
        out.extend(paths(v, prefix + (k,)))
    return out


def get_parent(doc: Any, path: tuple) -> Any:
    node = doc
    for k in path[:-1]:
        node = node[k]
    return node


def mutate_doc(doc: dict, rng: random.Random) -> str:
    """Apply one random mutation in place; returns what it did."""
    ps = paths(doc)
    if not ps:
        doc["x"] = 1
        return "add x"
    numeric = [p for p in ps if _is_number(get_parent(doc, p)[p[-1]])]
    # Half the time a number: most range checks (and the model's arithmetic) are about numbers.
    path = rng.choice(numeric if numeric and rng.random() < 0.5 else ps)
    parent, key = get_parent(doc, path), path[-1]
    where = ".".join(map(str, path))
    op = rng.choice(["delete", "rename", "retype", "extreme", "extreme", "extreme", "duplicate", "add_key"])
    if op == "delete":
        del parent[key]
        return f"delete {where}"
    if op == "rename" and isinstance(parent, dict):
        new = rng.choice([key + "x", key.upper(), key[:-1] or "k", "kind", "name", "value", "vm", "unit"])
        if new not in parent:
            parent[new] = parent.pop(key)
            return f"rename {where} -> {new}"
    if op == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key], allow_nan=True)))
        return f"duplicate {where}"
    if op == "add_key" and isinstance(parent[key], dict):
        parent[key][rng.choice(["bogus", "value", "kind", "name", "unit", "vcpus"])] = rng.choice(EXTREMES + OTHERS)
        return f"add key under {where}"
    old = parent[key]
    if op == "extreme" or _is_number(old):
        new = rng.choice(EXTREMES + [_near(old, rng)] * 6) if _is_number(old) else rng.choice(EXTREMES)
    else:
        new = rng.choice([x for x in EXTREMES + OTHERS if type(x) is not type(old)])
    parent[key] = new
    return f"set {where} = {str(new)[:30]!r}"


def _near(v: float, rng: random.Random) -> float | int:
    """A plausible neighbour of a number (often still valid): scaled, or its integer kin."""
    x = v * rng.choice([0, 0.001, 0.1, 0.5, 2, 10, 1000])
    return int(x) if isinstance(v, int) and abs(x) < 2**63 else x


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def mutate_text(text: str, rng: random.Random) -> tuple[str | bytes, str]:
    """Damage a file's text: truncation, deleted or duplicated lines, binary garbage."""
    op = rng.choice(["truncate", "truncate", "drop_line", "dup_line", "garbage", "binary", "bom_nul"])
    if op == "truncate":
        n = rng.randrange(len(text))
        return text[:n], f"truncate at {n}"
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    if op == "drop_line":
        return "".join(lines[:i] + lines[i + 1:]), f"drop line {i + 1}"
    if op == "dup_line":
        return "".join(lines[:i + 1] + lines[i:]), f"duplicate line {i + 1}"
    if op == "garbage":
        g = "".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randrange(1, 40)))
        return "".join(lines[:i]) + g + "".join(lines[i:]), f"garbage at line {i + 1}"
    if op == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))), "random bytes"
    return ("\ufeff" + text[: len(text) // 2] + "\x00" + text[len(text) // 2:]), "BOM and a NUL"


def shorten(doc: dict) -> None:
    """Keep accepted runs short without hiding bad values: a valid duration or warm-up is
    capped, an invalid one is left for the check to reject."""
    for key, cap in (("duration_s", 0.005), ("warmup_s", 0.002)):
        v = doc.get(key, 1.0 if key == "duration_s" else 0.1)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and cap < v <= 86400:
            doc[key] = cap


def examples() -> list[Path]:
    return sorted((ROOT / "examples").glob("*.toml"))


def profiles() -> list[Path]:
    return sorted((ROOT / "profiles").glob("*.toml"))


def make_cases(n: int, seed: int, workdir: Path) -> list[dict]:
    """``n`` cases: each writes its files under ``workdir`` and says how to run it."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        kind = rng.choices(["scenario", "profile", "scenario_text", "profile_text"], weights=[50, 25, 15, 10])[0]
        ex = rng.choice(examples())
        sc_path, prof_path = workdir / f"c{i}.toml", workdir / f"p{i}.toml"
        what = [f"{kind} of {ex.name}"]
        duration = None
        if kind in ("profile", "profile_text"):
            prof = rng.choice(profiles())
            what[0] = f"{kind} of {prof.name} (scenario {ex.name})"
            if kind == "profile":
                pdoc = tomllib.loads(prof.read_text())
                what += [mutate_doc(pdoc, rng) for _ in range(rng.choices([1, 2, 3], [6, 3, 1])[0])]
                prof_path.write_text(dumps(pdoc))
            else:
                text, w = mutate_text(prof.read_text(), rng)
                what.append(w)
                prof_path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
            doc = tomllib.loads(ex.read_text())
            doc["profile"] = str(prof_path)
            shorten(doc)
            sc_path.write_text(dumps(doc))
        elif kind == "scenario":
            doc = tomllib.loads(ex.read_text())
            what += [mutate_doc(doc, rng) for _ in range(rng.choices([1, 2, 3], [6, 3, 1])[0])]
            shorten(doc)
            sc_path.write_text(dumps(doc))
        else:
            text, w = mutate_text(ex.read_text(), rng)
            what.append(w)
            sc_path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
            duration = 0.005  # the text keeps the example's run length
        cases.append({"id": i, "what": "; ".join(what), "scenario": str(sc_path), "duration": duration})
    return cases


def run_cases(cases: list[dict], results: Path) -> None:
    """The child: run each case through the API; one JSON line per case (and a start marker,
    so that the parent can name a case that hangs or kills the process)."""
    import eventpath

    with open(results, "a") as out:
        for c in cases:
            out.write(json.dumps({"start": c["id"]}) + "\n")
            out.flush()
            try:
                eventpath.run(c["scenario"], duration=c["duration"])
                r = {"id": c["id"], "outcome": "ok"}
            except eventpath.InputError as e:
                r = {"id": c["id"], "outcome": "input_error", "message": str(e)}
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - a PanicException is a BaseException
                r = {"id": c["id"], "outcome": "exception", "message": f"{type(e).__name__}: {e}"}
            out.write(json.dumps(r) + "\n")
            out.flush()


if __name__ == "__main__":
    run_cases(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
