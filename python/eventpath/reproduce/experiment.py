"""What a reproduction is: an :class:`Experiment` whose ``rows`` run the simulator and return
:class:`Measured` values — simulated only; the published values are data beside it
(``published/ID.toml``), put beside the rows by :meth:`Experiment.compare`. The registry
:data:`EXPERIMENTS` holds every experiment; the experiment modules fill it on import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from eventpath.comparison import PublishedRow
from eventpath.reproduce import published
from eventpath.reproduce.simulate import SCENARIOS  # noqa: F401  (the experiments' import point)


class Measured(NamedTuple):
    """One simulated value of an experiment (None where the run has none)."""

    config: str
    metric: str
    unit: str
    simulated: float | None


@dataclass(frozen=True)
class Axis:
    """How an experiment's configurations lie on its paper's figure. ``pattern`` (a regular
    expression the whole config name must match) names the ``series`` (one configuration: one
    colour in every figure) and ``x``: a number puts the rows on lines against the paper's
    x-axis (``xlabel``: VMs, packet rate), a name makes them a group of bars (the message kind);
    an optional ``facet`` (the benchmark) gives each its own panels. A config the pattern does
    not match is a summary value and is drawn apart."""

    pattern: str
    xlabel: str


@dataclass
class Experiment:
    """A reproducible experiment of a seed."""

    id: str
    title: str
    source: str
    #: The built-in profile its scenarios use (its calibration targets decide the rows' roles).
    profile: str
    #: Runs the simulations; gets the duration override (or None) and a progress callback.
    rows: Callable[[float | None, Callable[[str], None]], list[Measured]]
    notes: list[str] = field(default_factory=list)
    #: The runs it makes, for the progress bar.
    runs: int = 1
    #: Where its rows lie on the paper's figure (None: each configuration is a bar of its own).
    axis: Axis | None = None
    #: The paper's baseline configurations (its hosts without its mechanism), as regular
    #: expressions a config name must match whole: their published values and stated regimes
    #: are calibration rows; every other row — a mechanism's value, a gain, a ratio, an order
    #: or a direction involving a mechanism — is a prediction (issue 47).
    baselines: tuple[str, ...] = ()
    #: Seeds of its default ensemble (``eventpath reproduce --seeds`` overrides).
    seeds: int = 1

    def is_baseline(self, config: str) -> bool:
        import re

        return any(re.fullmatch(p, config) for p in self.baselines)

    def compare(self, duration: float | None, step: Callable[[str], None]) -> list[PublishedRow]:
        """Run it; each simulated value beside its published one (``published/ID.toml``)."""
        return published.attach(self.id, self.rows(duration, step))


EXPERIMENTS: dict[str, Experiment] = {}


def register(e: Experiment) -> Experiment:
    EXPERIMENTS[e.id] = e
    return e
