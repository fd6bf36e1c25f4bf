"""The ``eventpath`` command line. Bad input: one line on stderr, exit code 2.

One module per family of commands, each holding its commands' arguments and handlers:
:mod:`.run` (``run``, ``trace``), :mod:`.experiments` (``reproduce``, ``calibrate``,
``report``), :mod:`.search` (``sweep``, ``compare``, ``qos``), :mod:`.show` (``keys``,
``profiles``, ``bench``, ``demo``), :mod:`.kvm` (``kvm probe|compare|run``) and :mod:`.host`
(``check-host``), :mod:`.advise` (``advise``); what they share
(exit codes, the usage error, the options several take) is :mod:`.common`, the lines printed
about a run :mod:`.run_summary`, and where they write :mod:`eventpath.outdir`. This module only
puts the parser together and maps every failure to its one line and exit code.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from eventpath.cli import advise, experiments, host, kvm, run, search, show
from eventpath.cli.common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_PROBE_REFUSED, MAX_WORKERS, Parser, UsageError
from eventpath.cli.run import MAX_TRACE_EVENTS, RUN_FIGURES, RUN_FILES, RUN_RECORDS, RUN_TABLES

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_PROBE_REFUSED", "MAX_TRACE_EVENTS", "MAX_WORKERS", "RUN_FIGURES",
           "RUN_FILES", "RUN_RECORDS", "RUN_TABLES", "UsageError", "main", "parser"]

#: Every command's parser, in the order ``eventpath --help`` lists them.
COMMANDS = (run.add_run, experiments.add_reproduce, experiments.add_sensitivity, search.add_qos,
            experiments.add_calibrate, search.add_sweep, search.add_compare, advise.add_advise, experiments.add_report, run.add_trace, show.add_keys, show.add_profiles,
            show.add_bench, show.add_demo, kvm.add_kvm, host.add_check_host)


class _Version(argparse.Action):
    """``--version``: the line is made only when asked for (it runs git)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from eventpath.version import describe

        print(describe())
        parser.exit(0)


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="eventpath", description="Simulate, reproduce and measure the virtual I/O event path.")
    p.add_argument("--version", action=_Version, help="print eventpath's version and commit, and exit")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    for add in COMMANDS:
        add(sub)
    return p


# A value argparse would take for an option: `-inf`, `-1e5`, `-.5`, `-nan`.
_NEGATIVE = re.compile(r"-(\d|\.\d|inf|infinity|nan)", re.IGNORECASE)


def _value_options(p: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``p`` and its subcommands that takes a value."""
    out: set[str] = set()
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for sub in act.choices.values():
                out |= _value_options(sub)
        elif act.option_strings and act.nargs != 0:
            out.update(act.option_strings)
    return out


def _negatives_as_values(p: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--duration -inf`` as ``--duration=-inf``: argparse reads a value that starts with '-'
    and is not a plain negative number as another option ("expected one argument"); joined, the
    value reaches its check, which names what is allowed."""
    opts, out, i = _value_options(p), [], 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    from eventpath._eventpath import InputError

    try:
        p = parser()
        a = p.parse_args(_negatives_as_values(p, sys.argv[1:] if argv is None else argv))
        a.argv = list(sys.argv[1:] if argv is None else argv)
        return a.fn(a)
    except (UsageError, InputError) as e:
        print(f"eventpath: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("eventpath: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except BaseException as e:  # a Rust panic arrives as pyo3's PanicException (a BaseException)
        if isinstance(e, SystemExit):
            raise
        if os.environ.get("EVENTPATH_DEBUG"):
            raise
        print(f"eventpath: internal error: {type(e).__name__}: {e} (set EVENTPATH_DEBUG=1 for a trace; please report)",
              file=sys.stderr)
        return 1
