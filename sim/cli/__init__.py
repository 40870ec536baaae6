"""The `sim` command: tables check, map, scenario, match, sweep, sensitivity, tune,
plan, check-run, report, replay, bench, demo and warm.

Bad input (a tables or scenario file with a problem) prints one clear message
per problem naming file, line and key, and exits with status 2; no traceback.

A command parses its options, calls the layer that does the work (sim.engine,
sim.runner, sim.analysis, sim.report) and prints what it returns. The commands are
grouped in modules: play (tables check, map, scenario, match), sweep, sensitivity,
tune, runs (plan, check-run, report, replay-command), replay, bench, start (demo,
warm); common holds the Typer apps, the options and checks they share.

Imports sit at the top of each module, but for the work layers: a command imports
what it calls when it runs, each such import marked with its measured cost
(python -X importtime, over `import sim.cli`, best of 7 on the 2-core VM). At the
top they would all load for every command, `sim --help` included: `import sim.cli`
took 4-5.5 s with all of them, 0.15 s without (0.20 s the tables, 0.2-0.5 s each
runner and analysis module, 0.6-0.7 s the engine with numba, 0.4-0.6 s altair). And
polars (0.11 s, under every module that reads runs) must not load before a sweep's
keep_freed_memory() nor before `sim report` sets its allocator's decay.
"""

from __future__ import annotations

import signal
import sys

import typer

# the command modules register their commands as they are imported, in the order
# `sim --help` lists them
# isort: off
from sim.cli import play, sweep, ladder, sensitivity, tune, runs, replay, bench, start  # noqa: F401
# isort: on
from sim.cli.common import app, signal_name


def _exit_on_signal(signum, _frame) -> None:
    """Ctrl-C or a TERM outside a sweep's own handling (sim.runner.signals.stop_on_signals,
    which restores this one when the sweep ends): one line and the shell's exit status."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    typer.echo(f"interrupted by {signal_name(signum)}", err=True)
    sys.exit(128 + signum)


def main() -> None:
    """The `sim` command. A signal that lands after the work is done, while the
    interpreter shuts down, is ignored: Python restores the default handlers then, and a
    finished sweep would otherwise die of the signal (exit -2) with its run complete."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _exit_on_signal)
    try:
        app()
    except OSError as exc:
        if exc.filename is None:
            raise
        # a path of the user's that cannot be written or read (--out in /proc, a folder
        # where a file goes): one line, as for any other bad input
        typer.echo(f"{exc.filename}: cannot use this path ({exc.strerror or exc})", err=True)
        sys.exit(2)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
