"""The Python API: run scenarios and get results as plain dicts or DataFrames."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from eventpath import _eventpath
from eventpath._eventpath import InputError

EXIT_REASONS = (
    "io_instruction",
    "interrupt_delivery",
    "eoi",
    "external_interrupt",
    "timer",
    "hlt",
    "ept_violation",
    "interrupt_window",
    "ipi",
    "other",
)


@dataclass
class Result:
    """One run's results: ``summary`` is the summary.json contract (see docs/summary.md)."""

    summary: dict[str, Any]
    latency_cdf: list[dict[str, Any]]

    # Tidy tables: one observation per row, one variable per column.
    def vm_rows(self) -> list[dict[str, Any]]:
        """One row per VM with the scalar metrics flattened (``throughput_gbps``, ...)."""
        rows = []
        for vm in self.summary["vms"]:
            row: dict[str, Any] = {"scenario": self.summary["scenario"], "seed": self.summary["seed"], "vm": vm["name"]}
            for k, v in vm.items():
                if k == "name" or k == "exits_per_s":
                    continue
                if isinstance(v, dict):
                    row.update({f"{k}_{kk}": vv for kk, vv in v.items()})
                else:
                    row[k] = v
            rows.append(row)
        return rows

    def exit_rows(self) -> list[dict[str, Any]]:
        """One row per (VM, exit reason)."""
        return [
            {"vm": vm["name"], "reason": r, "exits_per_s": vm["exits_per_s"][r]}
            for vm in self.summary["vms"]
            for r in EXIT_REASONS
        ]

    def pcpu_rows(self) -> list[dict[str, Any]]:
        """One row per pCPU."""
        return [{"pcpu": i, "util_pct": u} for i, u in enumerate(self.summary["host"]["pcpu_util_pct"])]

    def io_thread_rows(self) -> list[dict[str, Any]]:
        """One row per host I/O thread."""
        return list(self.summary["host"]["io_threads"])

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every tidy table by file stem."""
        return {
            "vms": self.vm_rows(),
            "exits": self.exit_rows(),
            "pcpus": self.pcpu_rows(),
            "io_threads": self.io_thread_rows(),
            "latency_cdf": self.latency_cdf,
        }

    def frames(self):  # pragma: no cover - thin pandas wrapper
        """The tidy tables as pandas DataFrames (needs pandas)."""
        import pandas as pd

        return {k: pd.DataFrame(v) for k, v in self.tables().items()}


def _result(text: str) -> Result:
    d = json.loads(text)
    return Result(summary=d["summary"], latency_cdf=d["latency_cdf"])


def run(scenario: str | os.PathLike | dict, *, seed: int | None = None, duration: float | None = None) -> Result:
    """Run a scenario: a path to a TOML file, or a dict with the same structure.

    Raises :class:`InputError` (a ``ValueError``) with a one-line message on bad input.
    """
    if isinstance(scenario, dict):
        return _result(_eventpath.run_json(json.dumps(scenario), "<dict>", seed, duration))
    return _result(_eventpath.run_file(os.fspath(scenario), seed, duration))


def profiles() -> list[tuple[str, str]]:
    """Built-in profiles as (name, one-line description)."""
    return _eventpath.profiles()


def profile(name: str) -> dict[str, Any]:
    """A profile (built-in name or path): every parameter with value, unit and source."""
    return json.loads(_eventpath.profile_json(name))
