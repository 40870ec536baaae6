"""What the commands share: the Typer apps, the --tables and --set options, the checks
of options several commands take (a tables file with its overrides, a match's seats and
length, the options of a command that plays a sweep), and the way out on bad input:
one line per problem and exit status 2, no traceback."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated, NoReturn

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Balance-simulation workbench for the hex 4X game.")
tables_app = typer.Typer(no_args_is_help=True, help="Balance tables.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (each prints a ratio or rate).")
app.add_typer(tables_app, name="tables")
app.add_typer(bench_app, name="bench")

TablesOpt = Annotated[Path | None, typer.Option("--tables", help="Tables file "
                                                "(default tables/default.toml).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="Override key.path=value "
                                                  "(repeatable).")]
# the options of a single match, shared by `sim match` and `sim replay`
SeatsOpt = Annotated[int | None, typer.Option(help="Seats, 2–6 (default: tables).")]
LengthOpt = Annotated[str | None, typer.Option(help="short | standard | long.")]
PersonalitiesOpt = Annotated[str | None, typer.Option(
    help="Comma-separated AI personality per seat (default: tables).")]


def fail(messages: list[str] | str) -> NoReturn:
    for line in [messages] if isinstance(messages, str) else messages:
        typer.echo(line, err=True)
    raise typer.Exit(2)


def say(line: str) -> None:
    """One line of news on stderr (the `say` of the runner's sweeps)."""
    typer.echo(line, err=True)


def check_run_options(backend: str, jobs: int | None, scheduler: str | None,
                      backends: tuple[str, ...] = ("local", "dask")) -> None:
    """The options every command that plays a sweep shares (sweep, sensitivity, tune):
    one line and exit 2 for a backend, worker count or scheduler that cannot run."""
    if backend not in backends:
        fail(f"--backend {backend}: choose local or dask")
    if jobs is not None and jobs < 1:
        fail("--jobs must be >= 1")
    if scheduler and backend != "dask":
        fail("--scheduler needs --backend dask")


def load_tables(path: Path | None, sets: list[str] | None):
    """The tables of --tables with the overrides of --set, or exit 2 naming every
    problem."""
    from sim.rules.tables import TablesError, parse_overrides  # lazy: 0.20 s
    from sim.rules.tables import load_tables as load

    # the board is checked by each command at the seats and length it plays
    # (check_board), not at the tables' default ones
    try:
        tables = load(path)
    except TablesError as exc:
        fail(exc.errors + (["--set: not checked until the tables themselves are valid"]
                           if sets else []))
    try:
        overrides = parse_overrides(sets or [])
        return tables.with_overrides(overrides, source="--set", check_board=False) \
            if overrides else tables
    except TablesError as exc:
        fail(exc.errors)


def check_board(tables, seats: int | None = None, length: str | None = None) -> None:
    """Exit 2 naming the keys when the board cannot hold a match at `seats` and `length`
    (default: the tables' own match; D1, D6). The tables themselves check only a file's
    own default match, and an override plays wherever its caller says."""
    from sim.rules.tables import board_problems  # lazy: 0.20 s

    problems = board_problems(tables.model, seats or tables.model.match.seats,
                              length or tables.model.match.length)
    if problems:
        fail([f"{tables.source}: {'.'.join(path)}: {reason}" for path, reason in problems])


def match_options(tables, seed: int, match: int, seats: int | None, length: str | None,
                  personalities: str | None) -> list[str] | None:
    """Check one match's options against the tables (exit 2 naming the bad one);
    returns the personalities as a list (None: the tables')."""
    if seats is not None and not 2 <= seats <= 6:
        fail(f"--seats {seats}: a match has 2 to 6 seats")
    if length is not None and length not in tables.model.match.lengths:
        fail(f"--length {length}: choose one of {', '.join(tables.model.match.lengths)}")
    check_board(tables, seats, length)
    if not (0 <= seed < 2**63 and 0 <= match < 2**63):
        fail("--seed and --match must be between 0 and 2**63 - 1")
    names = personalities.split(",") if personalities else None
    for name in names or []:
        if name not in tables.model.ai.personalities:
            fail(f"--personalities: unknown personality {name!r}; known: "
                 f"{', '.join(tables.personality_names)}")
    return names


def require_run(run_dir: Path):
    """The run's verified check, or exit 2 with one line naming what is wrong."""
    from sim.outputs.store import RunError, require_complete  # lazy: 0.20 s (polars)

    try:
        return require_complete(run_dir)
    except RunError as exc:
        fail(str(exc))


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def exit_if_missing(result: dict, command: str) -> None:
    """Exit 1 naming what is missing when a sweep left planned matches unwritten."""
    if result["problems"]:
        for line in result["problems"]:
            typer.echo(line, err=True)
        typer.echo(f"{result['missing']} of {result['planned']} planned matches are not "
                   f"written; run the same command again: {command}", err=True)
        raise typer.Exit(1)


def print_frame(frame, str_lengths: int) -> None:
    """A polars frame whole: every row, no shape line, three decimals."""
    import polars as pl  # lazy: 0.11 s

    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, float_precision=3,
                   tbl_width_chars=160, fmt_str_lengths=str_lengths):
        typer.echo(frame)
