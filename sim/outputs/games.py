"""The games the workbench plays (issue 48): the contract a game implements, and the
registry the runner, outputs, analysis and report look a game up in.

Why here, in the outputs layer: what the layers above the engine need of a game is
mostly its outcome tables (names, schemas, sort keys) and its codes, and analysis and
report may import only rules and outputs (tests/test_architecture.py). The parts that
run the game (its chunk player: Crown's in the engine layer, the hex game's in the
runner, where its column gathering already was) and draw it (its report sections, in
the report layer) are named here by module path, imported on use: a report's process
never loads numba, and no layer below the report imports it. Those named
modules are the only doors into a game's internals (the architecture test checks
that runner, outputs, analysis, report and the command line import none of them, nor
Crown's rules module, otherwise). `sim sensitivity`, `sim tune` and `sim replay` find
a game's study hooks and match replay here too (Game.hooks, Game.replayer), and
`sim bench match`, `sim scenario` and the errors rows of a chunk not played their
game's part (Game.bench_match, Game.run_scenario, Game.replay_command_for): shared code
asks the record, never a game's name (the architecture test fails on a comparison
with a game's name above the games; docs/architecture.md, "Games").

A chunk player is `play(settings, spec, tables) -> (tables' columns, summary)`: the
match indices [spec.start, spec.stop) of variant spec.variant, the run's root seed
and seat or side settings in `settings` (sim.runner.chunk.RunSettings); it returns a
dict table -> a polars frame or a dict of column lists (typed and key-sorted by the
runner with the game's schemas) and the chunk's summary (matches, errors, seconds).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.schemas import SCHEMAS, SORT_KEYS, SUMMARIES, TABLES, WRITTEN
from sim.rules import crown as crown_rules
from sim.rules.codes import SKILLS, VICTORY_NAMES
from sim.rules.schema import TablesModel
from sim.rules.tables import REPO_ROOT, Tables, load_tables

MATCH_KEYS = {"match_id": pl.Utf8, "match_index": pl.Int64}


@dataclass(frozen=True)
class Game:
    """One game on the workbench.

    name: the experiment's `game = …`; default_tables: its tables file (repo-relative);
    load: (path, overrides) -> validated tables with `.hash`, `.data` and `.stored`
    (what a run's provenance keeps), raising
    sim.rules.tables.TablesError with `file:line: key: reason` lines; rebuild:
    (the tables as a run's provenance keeps them, `.stored`, source, overrides) -> the same
    tables (pydantic's ValidationError when the schema changed since); schemas and
    sort_keys: its outcome tables (every table it writes is in `tables`; `written` adds
    any aggregates written beside them); results: its result codes (the matches
    table's decided-by names); outcome_column and outcomes: the matches table's column
    that says how a match ended and its values in order (the hex game's victory types,
    Crown's winner side or draw), the mix `sim sweep` prints; ai_levels: the AI
    skills it accepts; chunk_player and report_module: "module:function" and "module"
    paths, imported on use;
    report_sections: the titles its report module renders, in order.
    For `sim sensitivity`, `sim tune` and `sim replay`: setup_keys, the table keys
    (fnmatch patterns) ranked apart from the balance values as the match's setup;
    metrics, the per-match outcomes a tune's bands and the sensitivity's tornado name
    (each a share of finished matches or a per-match mean); study_runner and
    study_analysis, the modules (imported on use) holding the game's `overrides_at`
    and `play_key` (runner layer) and its `sensitivity_effects`, `outcome_values` and
    `confirm_table` (analysis layer); match_replay, "module:function" playing one
    match of a run again, (tables, seed, match index, the variant's provenance) ->
    {row, rounds, events}, None where `sim replay` draws the HTML viewer instead.
    For the runner and the command line, each "module:function", imported on use:
    replay_command, (sim.runner.chunk.RunSettings, variant, match index) -> the shell
    command that plays that match again, written in the errors rows of a chunk that
    could not be played at all (None: the rows say "", the game's chunk player writing
    its own replay in the rows of the matches it played); match_bench, `sim bench
    match` (matches or None for the game's default, skill, cold_start, phases) -> the
    figures (a "phases" entry: the per-phase table), skill one of ai_levels;
    scenario_runner, `sim scenario --game NAME` (file, as_json, tables file or None)
    -> None, printing the scenario's report and exiting 2 on a bad scenario.
    sides and ladder_variant: a two-sided game's ladder (sim.runner.ladder,
    sim.analysis.ladder): its sides as the matches' `winner` column names them (a
    pairing's i-th agent plays side i), and (first agent's skill, second's, the
    ladder's seats) -> the pairing variant's keys (side_skill, set), ValueError when
    the game cannot play it; () and None for a game of seats (seat_ai, `winner` the
    seat index).
    compile_first: a sweep's parent compiles the game's engine once, saying so with an
    estimate, before its workers play (sim.runner.progress.warm_engine: the hex
    engine's cold compile takes a minute, and its estimate and cache checks are that
    engine's); False: the first chunk compiles the game's kernels (Crown's: seconds).
    outcomes_from_run: the gate and `sim plan` follow the outcomes a run's matches show
    (sim.analysis._frames.victory_categories: the victory types, human_out only when a
    match ended so) and `sim plan` sizes the hex report's paired metrics; False: every
    one of `outcomes`, and the plan's family is their shares (sim.analysis.outcomes)."""

    name: str
    default_tables: str
    load: Callable[[Path, dict[str, Any]], Any]
    rebuild: Callable[[dict[str, Any], str, dict[str, Any]], Any]
    schemas: Mapping[str, Mapping[str, Any]]
    sort_keys: Mapping[str, list[str]]
    written: tuple[str, ...]
    results: tuple[str, ...]
    outcome_column: str
    outcomes: tuple[str, ...]
    ai_levels: tuple[int, ...]
    chunk_player: str
    report_module: str | None
    report_sections: tuple[str, ...]
    setup_keys: tuple[str, ...]
    metrics: tuple[str, ...]
    study_runner: str
    study_analysis: str
    match_replay: str | None
    replay_command: str | None
    match_bench: str
    scenario_runner: str
    sides: tuple[str, ...] = ()
    ladder_variant: Callable[[int | str, int | str, int], dict[str, Any]] | None = None
    compile_first: bool = False
    outcomes_from_run: bool = False

    @property
    def tables(self) -> tuple[str, ...]:
        """The outcome tables (not the aggregates), in write order."""
        return tuple(self.schemas)

    def player(self) -> Callable[..., tuple[dict[str, Any], dict[str, Any]]]:
        """The chunk player, imported now (the engine: numba)."""
        return _imported(self.chunk_player)

    def hooks(self, layer: str) -> Any:
        """The module of the game's study hooks in `layer` ("runner" or "analysis")."""
        return importlib.import_module(self.study_runner if layer == "runner"
                                       else self.study_analysis)

    def replayer(self) -> Callable[..., dict[str, Any]] | None:
        """The match replay (the engine: numba), imported now; None: the HTML viewer."""
        return None if self.match_replay is None else _imported(self.match_replay)

    def replay_command_for(self, settings: Any, variant: str, match_index: int) -> str:
        """The command replaying match `match_index` of `variant` in a run of `settings`
        (sim.runner.chunk.RunSettings), for an errors row; "" for a game without one."""
        if self.replay_command is None:
            return ""
        return _imported(self.replay_command)(settings, variant, match_index)

    def bench_match(self, matches: int | None, skill: int, cold_start: bool,
                    phases: bool) -> dict[str, Any]:
        """`sim bench match --game NAME`'s figures (the runner's benchmark: numba)."""
        return _imported(self.match_bench)(matches, skill, cold_start, phases)

    def run_scenario(self, file: Path, as_json: bool, tables: Path | None) -> None:
        """`sim scenario --game NAME`: play the scenario file and print its report."""
        _imported(self.scenario_runner)(file, as_json, tables)

    def report(self) -> Any:
        """The report module (sections(run) -> HTML), imported now; None: the hex page."""
        return None if self.report_module is None else importlib.import_module(
            self.report_module)


def _imported(path: str) -> Callable[..., Any]:
    """The function a "module:function" path names, its module imported now."""
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


# ---- Crown's outcome tables (docs/crown.md, ../shared/RULES-crown.md's last section) --
_W = crown_rules.WIDGETS
CROWN_SCHEMAS: dict[str, dict[str, Any]] = {
    "matches": {
        **MATCH_KEYS, "seed": pl.Int64, "tables_hash": pl.Utf8,
        "team_a": pl.Int64, "team_b": pl.Int64, "skill_a": pl.Int64, "skill_b": pl.Int64,
        # "A", "B" or "draw" (K13), and what decided it: one of crown_rules.RESULTS
        "winner": pl.Utf8, "decided_by": pl.Utf8,
        **{f"total_{s.lower()}": pl.Int64 for s in crown_rules.SIDES},
        # each score term's points per side (K10, K11): zones_points_a, …
        **{crown_rules.term_column(term, s): pl.Int64 for term in crown_rules.SCORE_TERMS
           for s in crown_rules.SIDES},
        # zones and region majorities held at the end (K13's tie-breaks)
        "zones_a": pl.Int64, "zones_b": pl.Int64,
        "majorities_a": pl.Int64, "majorities_b": pl.Int64,
        # the side ahead after the fault round (L6); null: level, or no fault
        "fault_leader": pl.Utf8,
        # waves whose first player (K05) was of the side; the side first more often
        "first_a": pl.Int64, "first_b": pl.Int64, "first_side": pl.Utf8,
        # rolls by lead (K03) and attacks by the attacker's lead (K07), both sides
        **{f"leads_{w}": pl.Int64 for w in _W},
        **{f"{count}_{w}": pl.Int64 for count in crown_rules.ATTACK_COUNTS for w in _W},
        "replay": pl.Utf8,
    },
    "rounds": {
        **MATCH_KEYS, "round": pl.Int64,
        **{name: pl.Int64 for name in crown_rules.ROUND_FIELDS},
    },
    "errors": {**MATCH_KEYS, "seed": pl.Int64, "message": pl.Utf8, "replay": pl.Utf8},
}
# what a tune's bands and the sensitivity's tornado name (sim.analysis.sensitivity_crown
# defines each over a `matches` row): shares of finished matches, the last three of the
# matches that have a value (a first side, a fault leader, a winning attack)
CROWN_METRICS = ("side_a_wins", "side_b_wins", "draws", "first_in_order_wins",
                 "fault_leader_wins", "surge_decided_share", "cycle_decided_share")
CROWN_SORT_KEYS = {"matches": ["match_index"], "rounds": ["match_index", "round"],
                   "errors": ["match_index"]}


def _load_crown(path: Path, overrides: dict[str, Any]) -> Any:
    return crown_rules.load_crown_tables(path, overrides)


def _rebuild_crown(resolved: dict[str, Any], source: str, overrides: dict[str, Any]) -> Any:
    """Crown's tables from a run's provenance, which keeps them stored
    (CrownTables.stored: `map.zones` a list in map order, so the zones keep the order
    the tables file gave them, and so the kernels' zone indices and the homes)."""
    data = crown_rules.stored_to_data(resolved)
    return crown_rules.CrownTables(model=crown_rules.CrownTablesModel.model_validate(data),
                                   source=source, overrides=overrides)


def _crown_ladder_variant(first: int | str, second: int | str, seats: int) -> dict[str, Any]:
    """A Crown ladder pairing (issue 48 item 4): every player of side A at the first
    agent's AI level, every player of side B at the second's; the ladder's seats are
    the match's players, half a side ("random": CROWN_SKILL_RANDOM)."""
    if seats % 2:
        raise ValueError(f"seats = {seats}: Crown's ladder plays equal sides, so an even "
                         "number of players (2: 1 v 1, 4: 2 v 2, 6: 3 v 3)")

    def level(skill: int | str) -> int | str:
        return crown_rules.CROWN_SKILL_RANDOM if skill == crown_rules.CROWN_SKILL_RANDOM_NAME \
            else skill

    return {"side_skill": [level(first), level(second)],
            "set": {"match.team_sizes": [seats // 2, seats // 2]}}


def _rebuild_hex(resolved: dict[str, Any], source: str, overrides: dict[str, Any]) -> Any:
    return Tables(model=TablesModel.model_validate(resolved), source=source,
                  overrides=overrides)


def _load_hex(path: Path, overrides: dict[str, Any]) -> Any:
    return load_tables(path, overrides=overrides or None)


HEX = Game(
    name="hex", default_tables="tables/default.toml", load=_load_hex, rebuild=_rebuild_hex,
    schemas=SCHEMAS, sort_keys=SORT_KEYS, written=WRITTEN, results=tuple(VICTORY_NAMES),
    outcome_column="victory", outcomes=tuple(VICTORY_NAMES),
    ai_levels=tuple(SKILLS), chunk_player="sim.runner.chunk:play_hex_chunk", report_module=None,
    report_sections=(), setup_keys=("match.*", "map.radius"),
    metrics=(*VICTORY_NAMES[: VICTORY_NAMES.index("human_out")], "median_end_turn"),
    study_runner="sim.runner.sensitivity", study_analysis="sim.analysis.sensitivity",
    match_replay=None, replay_command="sim.runner.chunk:match_command",
    match_bench="sim.runner.bench:hex_match_bench",
    scenario_runner="sim.cli.play:hex_scenario", compile_first=True, outcomes_from_run=True)
CROWN = Game(
    name="crown", default_tables="tables/crown/default.toml", load=_load_crown,
    rebuild=_rebuild_crown,
    schemas=CROWN_SCHEMAS, sort_keys=CROWN_SORT_KEYS, written=tuple(CROWN_SCHEMAS),
    results=crown_rules.RESULTS, outcome_column="winner",
    outcomes=(*crown_rules.SIDES, "draw"), ai_levels=crown_rules.CROWN_AI_LEVELS,
    chunk_player="sim.engine.crown_chunk:play_crown_chunk",
    report_module="sim.report.crown",
    report_sections=("Side win rates by team size", "The first in order",
                     "The fault-round leader", "Surge and the lead cycle", "Lead types",
                     "Score terms"),
    # the rounds, waves and last-round multiplier set the match up, and the AI's
    # weights are how it is played, not what a designer balances
    setup_keys=("match.*", "ai.*"), metrics=CROWN_METRICS,
    study_runner="sim.runner.sensitivity_crown",
    study_analysis="sim.analysis.sensitivity_crown",
    match_replay="sim.engine.crown_replay:replay_run_match",
    # its chunk player writes each played match's replay (a Python call: Crown has no
    # `sim match`); a chunk not played at all has none
    replay_command=None, match_bench="sim.runner.bench:crown_match_bench",
    scenario_runner="sim.cli.play:crown_scenario",
    sides=crown_rules.SIDES, ladder_variant=_crown_ladder_variant)
GAMES: dict[str, Game] = {g.name: g for g in (HEX, CROWN)}
GAME_NAMES = tuple(GAMES)
# every table any game writes, in order: the folders a run folder may hold
ALL_WRITTEN: tuple[str, ...] = tuple(dict.fromkeys(t for g in GAMES.values()
                                                   for t in g.written))
assert set(SUMMARIES) <= set(WRITTEN) and set(TABLES) <= set(WRITTEN)


def game_of(name: str | None) -> Game:
    """The game named `name` (None: the hex game, a run written before games had names);
    KeyError naming the games for any other."""
    if name is None:
        return HEX
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; one of {', '.join(GAMES)}") from None


def game_of_run(provenance: Mapping[str, Any]) -> Game:
    """The game a run folder's provenance names (none: the hex game)."""
    return game_of(provenance.get("game"))


def default_tables_path(game: Game) -> Path:
    return REPO_ROOT / game.default_tables
