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

from sim.outputs.games import HEX, Game


def outcome_rows(matches: pl.DataFrame, game: Game) -> pl.DataFrame:
    """`matches` of a run of `game` with `victory` its outcome (hex: unchanged) and
    `end_turn` present (another game: 0, its matches having no turns to compare)."""
    if game is HEX:
        return matches
    return matches.with_columns(pl.col(game.outcome_column).cast(pl.Utf8).alias("victory"),
                                pl.lit(0, dtype=pl.Int64).alias("end_turn"))


def outcome_categories(game: Game) -> list[str] | None:
    """The outcomes a game's shares are followed by; None: the hex game's victory
    types (sim.analysis._frames.victory_categories, human_out only if it occurs)."""
    return None if game is HEX else list(game.outcomes)
