"""A ladder is a sweep (issue 43): its variants are the pairings of its agents.

`ladder_experiment` turns a ladder file (sim.outputs.ladder: a `[ladder]` section,
with the experiment's `name`, `description` and `tables` beside it) into an ordinary
Experiment whose variants are the pairings, each with the base tables and `seat_ai`
giving every seat its agent's settings. The sweep is then `sim sweep`'s own
(sim.runner.sequential.run_experiment: joblib chunks, Parquet, provenance, verified
resume), and match i of every pairing is played on the same seeded map and draws
(common random numbers), so the pairings of a pair differ only in who sits where.
The run's provenance keeps the file's text, from which sim.analysis.ladder reads the
agents and pairings back.

A file that says `game = "crown"` (any game with sides, sim.outputs.games) plays its
pairings through the game's `ladder_variant`: one side's players all at the first
agent, the other side's all at the second, the ladder's `seats` the match's players.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from sim.outputs.games import HEX, Game, game_of
from sim.outputs.ladder import AgentSpec, LadderSpec, pairings
from sim.rules.tomlpos import key_lines, read_toml, validation_problems
from sim.runner.experiments import (
    Experiment,
    ExperimentError,
    ExperimentSpec,
    SweepLimit,
    VariantSpec,
    expand,
)

# what a ladder file may hold besides [ladder]: the experiment keys that say what the
# run is, not what it plays
_TOP_KEYS = ("name", "description", "game", "tables")


def ladder_spec(path: str | Path) -> tuple[LadderSpec, ExperimentSpec, str, dict]:
    """(the ladder, the experiment that plays it, the file's text, its key lines) of a
    ladder file; ExperimentError naming the file, line and key at fault."""
    path = Path(path)
    text, raw = read_toml(path, ExperimentError)
    lines = key_lines(text)
    extra = sorted(set(raw) - {"ladder", *_TOP_KEYS})
    if "ladder" not in raw or extra:
        what = f"unknown key {extra[0]!r} (a ladder file holds {', '.join(_TOP_KEYS)} and " \
            "[ladder])" if extra else "no [ladder] section"
        raise ExperimentError(f"{path}: {what}")
    try:
        ladder = LadderSpec.model_validate(raw["ladder"])
    except ValidationError as exc:
        errors = [{**e, "loc": ("ladder", *e["loc"])} for e in exc.errors()]
        raise ExperimentError("\n".join(validation_problems(errors, path, lines))) from None
    agents = {a.name: a for a in ladder.agent_specs}
    try:
        game = game_of(raw.get("game"))
    except KeyError as exc:
        raise ExperimentError(f"{path}: game: {exc.args[0]}") from None
    sided = game.ladder_variant is not None
    variants = [_pairing(game, name, [agents[a] for a in seat_agents], ladder.seats, path)
                for name, seat_agents in pairings(ladder)]
    # a game with sides reads neither the hex game's seats nor its length (its pairing
    # variant sets its team sizes)
    settings = {} if sided else {"seats": ladder.seats, "length": ladder.length}
    if "tables" in raw or not sided:
        settings["tables"] = raw.get("tables", HEX.default_tables)
    try:
        spec = ExperimentSpec(
            name=raw.get("name", path.stem), description=raw.get("description", ""),
            game=game.name, root_seed=ladder.seed,
            matches=ladder.matches, chunk_size=ladder.chunk_size, baseline=variants[0].name,
            variants=variants, limit=SweepLimit(matches=10_000_000), **settings)
    except ValidationError as exc:
        raise ExperimentError("\n".join(validation_problems(exc.errors(), path, lines))
                              ) from None
    return ladder, spec, text, lines


def _pairing(game: Game, name: str, seats: list[AgentSpec], n_seats: int,
             path: Path) -> VariantSpec:
    """The variant of one pairing: seat_ai by seat (a game of seats), or the game's own
    pairing keys (side_skill, set: a game with sides, the first seat's agent on side A,
    the second's on side B)."""
    if game.ladder_variant is None:
        return VariantSpec(name=name, seat_ai=[a.seat_ai for a in seats],
                           description=f"{' / '.join(a.name for a in seats)} by seat")
    if any(a.forbid for a in seats):
        raise ExperimentError(f"{path}: ladder.agents: the {game.name} game's agents are "
                              "its AI levels (\"skill-N\", \"random\"), with no forbid")
    try:
        keys = game.ladder_variant(seats[0].skill, seats[1].skill, n_seats)
    except ValueError as exc:
        raise ExperimentError(f"{path}: ladder.seats: {exc}") from None
    return VariantSpec(name=name, description=f"{seats[0].name} side A, {seats[1].name} "
                       "side B", **keys)


def ladder_experiment(path: str | Path) -> tuple[LadderSpec, Experiment]:
    """The ladder of a file and the Experiment that plays its pairings (expanded, every
    agent's seat_ai checked against the tables)."""
    ladder, spec, text, lines = ladder_spec(path)
    return ladder, expand(spec, Path(path), text, lines)


__all__ = ["ladder_experiment", "ladder_spec"]
