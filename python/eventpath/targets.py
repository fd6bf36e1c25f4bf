"""Calibration targets: the reproduction rows a profile's fit aims at
(``profiles/calibration/PROFILE.toml``, or a ``--targets`` file of the same format).

``eventpath calibrate`` fits a profile's free parameters to them; ``eventpath reproduce``
marks them as each row's ``role`` ("calibration" rather than "prediction"). Both import this
module, which imports neither: the experiments' names and profiles come in as an argument.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from eventpath import _eventpath
from eventpath._eventpath import InputError


@dataclass(frozen=True)
class TargetSpec:
    """An entry of a calibration-targets file."""

    experiment: str
    #: "config/metric" names, or None for every row with a published value.
    rows: tuple[str, ...] | None
    weight: float


def load_targets(profile: str, experiments: Mapping[str, str],
                 path: str | os.PathLike | None = None) -> list[TargetSpec]:
    """The calibration targets of ``profile`` (built-in), or those in the file ``path``.
    ``experiments`` maps every known experiment to its profile: an entry must name one of
    them, run on ``profile``."""
    if path is not None:
        origin = os.fsdecode(path)
        try:
            text = Path(origin).read_text()
        except OSError as e:
            raise InputError(f"--targets {origin}: cannot read file: {e.strerror}") from None
    else:
        builtin = _eventpath.builtin_profile_text(profile)
        if builtin is None or builtin[1] is None:
            raise InputError(f"profile {profile}: no calibration targets; give --targets FILE "
                             "(format: profiles/calibration/es2.toml)")
        origin, text = f"profiles/calibration/{profile}.toml", builtin[1]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{origin}: not TOML: {e}") from None
    extra = set(doc) - {"profile", "targets"}
    if extra:
        raise InputError(f"{origin}: key `{sorted(extra)[0]}` is not allowed; expected profile, targets")
    if doc.get("profile") != profile:
        raise InputError(f"{origin}: key `profile`: {doc.get('profile')!r} is not allowed; expected {profile!r}")
    entries = doc.get("targets")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{origin}: key `targets`: expected a non-empty list of {{ experiment, rows?, weight? }}")
    out = []
    for i, t in enumerate(entries):
        where = f"{origin}: key `targets[{i}]"
        if not isinstance(t, dict) or set(t) - {"experiment", "rows", "weight"}:
            raise InputError(f"{where}`: expected {{ experiment, rows?, weight? }}")
        exp = t.get("experiment")
        if exp not in experiments:
            raise InputError(f"{where}.experiment`: {exp!r} is not a known experiment; known: {', '.join(experiments)}")
        if experiments[exp] != profile:
            raise InputError(f"{where}.experiment`: {exp} runs on profile {experiments[exp]}, not {profile}")
        rows = t.get("rows")
        if rows is not None and not (isinstance(rows, list) and rows and all(isinstance(r, str) and "/" in r for r in rows)):
            raise InputError(f"{where}.rows`: expected a list of \"config/metric\" names")
        w = t.get("weight", 1.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w) and w > 0):
            raise InputError(f"{where}.weight`: {w!r} is not allowed; expected a positive number")
        out.append(TargetSpec(exp, tuple(rows) if rows is not None else None, float(w)))
    return out


def is_target(spec: list[TargetSpec]) -> Callable[[str, str, str], bool]:
    """A test of (experiment, config, metric) against the targets ``spec`` (an entry without
    ``rows`` takes every row of its experiment)."""
    return lambda exp, config, metric: any(
        t.experiment == exp and (t.rows is None or f"{config}/{metric}" in t.rows) for t in spec)
