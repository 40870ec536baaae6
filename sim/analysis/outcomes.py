"""A game's match outcomes in the shape the gate and `sim plan` read (issue 48).

The regression gate (sim.analysis.gate) and `sim plan` (sim.analysis.plan) follow the
shares of how matches ended: the hex game's victory types, in its `victory` column. A
game names its own outcome column and values in the game interface
(sim.outputs.games: Crown's `winner`, side A, side B or a draw), and this module
hands them over as that `victory` column, so the gate and the plan run unchanged on
the winner-side shares of a Crown run.
"""

from __future__ import annotations

import polars as pl

from sim.outputs.games import Game


def outcome_rows(matches: pl.DataFrame, game: Game) -> pl.DataFrame:
    """`matches` of a run of `game` with `victory` its outcome (the hex game's own
    column: unchanged) and `end_turn` present (a game whose matches have no turns: 0,
    nothing to compare)."""
    added = []
    if game.outcome_column != "victory":
        added.append(pl.col(game.outcome_column).cast(pl.Utf8).alias("victory"))
    if "end_turn" not in matches.columns:
        added.append(pl.lit(0, dtype=pl.Int64).alias("end_turn"))
    return matches.with_columns(added) if added else matches


def outcome_categories(game: Game) -> list[str] | None:
    """The outcomes a game's shares are followed by; None: those the run shows
    (Game.outcomes_from_run: the hex game's victory types,
    sim.analysis._frames.victory_categories, human_out only if it occurs)."""
    return None if game.outcomes_from_run else list(game.outcomes)
