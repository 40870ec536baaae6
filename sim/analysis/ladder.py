"""The ladder's reading (issue 43): who beats whom, each agent's rating, and whether the
ladder is monotone.

A ladder run (sim.runner.ladder) is a sweep whose variants are the pairings of its
agents (sim.outputs.ladder.pairings: each pair in both seat orders, match i of every
pairing on the same seeds). Read back from the run's provenance (the ladder file's
text), every match becomes a game between two agents with a winner or a draw:

- `ladder_games`: one row per match: pairing, match_index, the two agents (first =
  the agent of seat 0), and the winning agent (null when no seat won).
- `win_matrix`: each ordered pair (agent, opponent): its wins over the opponent in all
  their matches, both seat orders pooled (so the seat's own advantage cancels), with
  the Wilson 95 % interval of its share of the decided ones (statsmodels).
- `bradley_terry` (two seats: choix's ILSR, a little regularised so an agent that
  never wins keeps a finite rating; intervals by a bootstrap over matches within each
  pairing) and `openskill_ratings` (more seats: openskill's Plackett-Luce, the agent of
  the winning seat ranked first, mu ± 1.96 sigma): one rating per agent.
- `monotone_steps`: each rung (an agent without a forbid, in the order the file lists
  them, weakest first) against the rung below it: "beats" when the Wilson interval
  of its head-to-head share lies above 50 %. The ladder is monotone when every step
  beats; the issue's target adds a share of at least 55 %.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import polars as pl

from sim.analysis.stats import wilson_bounds
from sim.outputs.games import game_of_run
from sim.outputs.ladder import LadderSpec, ladder_of_text, pairings

# the target for a step of the ladder: the upper rung's head-to-head share
TARGET_SHARE = 0.55
BOOTSTRAP = 200  # resamples behind the Bradley-Terry intervals
BT_ALPHA = 0.01  # choix's regularisation: finite ratings for an agent that never wins


def ladder_of_run(provenance: dict[str, Any]) -> LadderSpec | None:
    """The run's ladder (from the file text its provenance keeps), or None: not a ladder."""
    text = (provenance.get("experiment") or {}).get("text") or ""
    return ladder_of_text(text)


def ladder_games(matches: pl.DataFrame, ladder: LadderSpec,
                 sides: tuple[str, ...] = ()) -> pl.DataFrame:
    """One row per match of the ladder's pairings: variant, match_index, first (seat
    0's agent), second, winner (the winning seat's agent; null: no winner). `sides`: a
    two-sided game's side names (sim.outputs.games.Game.sides), whose `winner` column
    names a side, side i playing seat i's agent; () when `winner` is a seat index."""
    rows = []
    by_variant = {name: seats for name, seats in pairings(ladder)}
    for variant, match_index, winner in matches.select(
            "variant", "match_index", "winner").iter_rows():
        seats = by_variant.get(variant)
        if seats is None:
            continue
        if sides:  # a side's name, or a draw's
            winner = sides.index(winner) if winner in sides else None
        won = seats[winner] if winner is not None and 0 <= winner < len(seats) else None
        rows.append((variant, match_index, seats[0], seats[1], won))
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_index": pl.Int64,
                                      "first": pl.Utf8, "second": pl.Utf8,
                                      "winner": pl.Utf8}, orient="row")


def win_matrix(games: pl.DataFrame, agents: list[str],
               confidence: float = 0.95) -> pl.DataFrame:
    """Each ordered pair of distinct agents (agent, opponent) that met: wins, losses,
    draws, share (wins / decided), lo, hi (Wilson). Rows in the agents' order."""
    rows = []
    for a in agents:
        for b in agents:
            if a == b:
                continue
            met = games.filter(((pl.col("first") == a) & (pl.col("second") == b))
                               | ((pl.col("first") == b) & (pl.col("second") == a)))
            if met.height == 0:
                continue
            wins = met.filter(pl.col("winner") == a).height
            losses = met.filter(pl.col("winner") == b).height
            rows.append((a, b, wins, losses, met.height - wins - losses))
    out = pl.DataFrame(rows, schema={"agent": pl.Utf8, "opponent": pl.Utf8, "wins": pl.Int64,
                                     "losses": pl.Int64, "draws": pl.Int64}, orient="row")
    decided = (out["wins"] + out["losses"]).to_numpy()
    lo, hi = wilson_bounds(out["wins"].to_numpy(), decided, confidence)
    share = np.where(decided > 0, out["wins"].to_numpy() / np.maximum(decided, 1), np.nan)
    return out.with_columns(pl.Series("share", share).fill_nan(None),
                            pl.Series("lo", lo).fill_nan(None),
                            pl.Series("hi", hi).fill_nan(None))


def _bt_fit(n: int, wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry log-strengths (mean 0) of `n` agents from (winner, loser) rows."""
    import choix  # lazy: only a ladder's report needs it

    return np.asarray(choix.ilsr_pairwise(n, wins, alpha=BT_ALPHA))


def bradley_terry(games: pl.DataFrame, agents: list[str], confidence: float = 0.95,
                  seed: int = 0) -> pl.DataFrame:
    """agent, rating (Bradley-Terry log-strength, mean 0 over the agents: agent i beats
    agent j with chance 1 / (1 + exp(r_j - r_i))), lo, hi (percentile bootstrap over the
    matches, resampled within each pairing so every pairing keeps its size). Draws are
    left out. Sorted by rating, strongest first."""
    index = {a: i for i, a in enumerate(agents)}
    decided = games.filter(pl.col("winner").is_not_null())
    loser = pl.when(pl.col("winner") == pl.col("first")).then(pl.col("second")) \
        .otherwise(pl.col("first"))
    pairs = decided.select("variant", "winner", loser.alias("loser"))
    wins = np.array([(index[w], index[v]) for w, v in pairs.select("winner", "loser")
                     .iter_rows()], dtype=np.int64).reshape(-1, 2)
    rating = _bt_fit(len(agents), wins)
    groups = [np.flatnonzero(pairs["variant"].to_numpy() == v)
              for v in pairs["variant"].unique(maintain_order=True).to_list()]
    rng = np.random.default_rng(seed)
    draws = np.empty((BOOTSTRAP, len(agents)))
    for b in range(BOOTSTRAP):
        pick = np.concatenate([g[rng.integers(0, g.size, g.size)] for g in groups])
        draws[b] = _bt_fit(len(agents), wins[pick])
    tail = (1.0 - confidence) / 2 * 100
    lo, hi = np.percentile(draws, [tail, 100 - tail], axis=0)
    return pl.DataFrame({"agent": agents, "rating": rating, "lo": lo, "hi": hi}) \
        .sort("rating", descending=True)


def openskill_ratings(games: pl.DataFrame, agents: list[str],
                      confidence: float = 0.95) -> pl.DataFrame:
    """agent, rating (openskill Plackett-Luce mu after every match in match order, the
    winning seat's agent ranked first, a draw a tie), lo, hi (mu ± z sigma). For
    ladders of more than two seats, where a pairing's agent holds several seats.
    Sorted by rating, strongest first."""
    from openskill.models import PlackettLuce  # lazy: only a ladder's report needs it
    from scipy.stats import norm

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    for first, second, winner in games.sort("match_index", "variant").select(
            "first", "second", "winner").iter_rows():
        ranks = [1, 1] if winner is None else [1, 2] if winner == first else [2, 1]
        (new_first,), (new_second,) = model.rate([[ratings[first]], [ratings[second]]],
                                                 ranks=ranks)
        ratings[first], ratings[second] = new_first, new_second
    z = float(norm.ppf(0.5 + confidence / 2))
    mu = [ratings[a].mu for a in agents]
    sigma = [ratings[a].sigma for a in agents]
    return pl.DataFrame({"agent": agents, "rating": mu,
                         "lo": [m - z * s for m, s in zip(mu, sigma, strict=True)],
                         "hi": [m + z * s for m, s in zip(mu, sigma, strict=True)]}) \
        .sort("rating", descending=True)


def ratings(games: pl.DataFrame, ladder: LadderSpec, confidence: float = 0.95,
            sided: bool = False) -> tuple[str, pl.DataFrame]:
    """(the rating's name, its table): Bradley-Terry for a two-seat ladder or a game
    of two sides (`sided`: each match one agent against one), openskill for more
    seats."""
    agents = [a.name for a in ladder.agent_specs]
    if ladder.seats == 2 or sided:
        return "Bradley-Terry", bradley_terry(games, agents, confidence)
    return "openskill", openskill_ratings(games, agents, confidence)


def monotone_steps(matrix: pl.DataFrame, ladder: LadderSpec) -> pl.DataFrame:
    """lower, upper (consecutive rungs: agents without a forbid, in the file's order),
    wins, decided, share (the upper's head-to-head share), lo, hi, beats (lo > 50 %),
    target (beats and share >= TARGET_SHARE)."""
    rungs = [a.name for a in ladder.agent_specs if a.rung]
    rows = []
    for lower, upper in itertools.pairwise(rungs):
        hit = matrix.filter((pl.col("agent") == upper) & (pl.col("opponent") == lower))
        if hit.height == 0:
            continue
        r = hit.row(0, named=True)
        share, lo = r["share"], r["lo"]
        beats = lo is not None and lo > 0.5
        rows.append((lower, upper, r["wins"], r["wins"] + r["losses"], share, lo, r["hi"],
                     beats, beats and share is not None and share >= TARGET_SHARE))
    return pl.DataFrame(rows, schema={"lower": pl.Utf8, "upper": pl.Utf8, "wins": pl.Int64,
                                      "decided": pl.Int64, "share": pl.Float64,
                                      "lo": pl.Float64, "hi": pl.Float64,
                                      "beats": pl.Boolean, "target": pl.Boolean},
                        orient="row")


def verdict(steps: pl.DataFrame) -> str:
    """One line: "monotone" (every step beats the rung below significantly) or "not
    monotone", naming the steps that fail, and whether each step meets the 55 % target."""
    if steps.height == 0:
        return "no rungs to compare (a ladder needs two agents without a forbid)"
    failed = [f"{r['upper']} over {r['lower']}" for r in steps.iter_rows(named=True)
              if not r["beats"]]
    short = [f"{r['upper']} over {r['lower']}" for r in steps.iter_rows(named=True)
             if r["beats"] and not r["target"]]
    if failed:
        head = f"not monotone: {', '.join(failed)} not significantly above 50 %"
    else:
        head = "monotone: each rung beats the one below it (95 % interval above 50 %)"
    tail = f"; below the {TARGET_SHARE:.0%} target: {', '.join(short)}" if short else \
        ("" if failed else f"; every step at {TARGET_SHARE:.0%} or more")
    return head + tail


def read_ladder(matches: pl.DataFrame, provenance: dict[str, Any],
                confidence: float = 0.95) -> dict[str, Any] | None:
    """Everything the command and the report show of a ladder run, or None when the run
    is no ladder: ladder, games, matrix, rating name, ratings, steps, verdict."""
    ladder = ladder_of_run(provenance)
    if ladder is None:
        return None
    sides = game_of_run(provenance).sides
    games = ladder_games(matches, ladder, sides)
    agents = [a.name for a in ladder.agent_specs]
    matrix = win_matrix(games, agents, confidence)
    name, table = ratings(games, ladder, confidence, sided=bool(sides))
    steps = monotone_steps(matrix, ladder)
    return {"ladder": ladder, "agents": agents, "games": games, "matrix": matrix,
            "rating_name": name, "ratings": table, "steps": steps,
            "verdict": verdict(steps)}


__all__ = ["TARGET_SHARE", "bradley_terry", "ladder_games", "ladder_of_run",
           "monotone_steps", "openskill_ratings", "ratings", "read_ladder", "verdict",
           "win_matrix"]
