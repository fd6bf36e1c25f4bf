"""Means over seeds with their 95 % intervals (Student's t), as ``advise`` and ``sweep`` report
them: one definition, so that a gain's interval reads the same everywhere."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Student's t at 97.5 % by degrees of freedom (1..30); beyond, the normal's 1.96.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(dof: int) -> float:
    return _T975[dof - 1] if 1 <= dof <= len(_T975) else 1.96


@dataclass
class Interval:
    """A mean over ``n`` values and its 95 % half-width (None with one value)."""

    mean: float
    half: float | None
    n: int

    @property
    def lo(self) -> float | None:
        return None if self.half is None else self.mean - self.half

    @property
    def hi(self) -> float | None:
        return None if self.half is None else self.mean + self.half

    def excludes_zero(self) -> bool:
        return self.half is not None and (self.lo > 0 or self.hi < 0)


def interval(xs: list[float]) -> Interval | None:
    """The mean of ``xs`` with its Student-t 95 % interval; None without values."""
    if not xs:
        return None
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return Interval(m, None, n)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return Interval(m, t975(n - 1) * sd / math.sqrt(n), n)
