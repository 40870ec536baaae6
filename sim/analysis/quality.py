"""How the game plays (issue 45): game-quality metrics per match, from the per-turn,
per-seat table a sweep writes (`turns`, docs/outcomes.md), the `matches` rows and
the seats' `eliminated_turn`. The `quality` table is derived here, in analysis,
never written by the sweep: every run folder, old ones included, has it, and it
changes with its definitions, not with the engine (docs/quality.md says why).

Each definition once, with the metric of Ludii's evaluation suite (Browne 2008,
Stephenson et al.; `Ludii/Evaluation/src/metrics/single/...`) it follows:

* standings: at the end of each turn the seats are ranked by T11 (score, then
  population, region tiles, gold stock, seat order; the turns table's population
  and region points are those counts times a positive weight, so they order alike),
  seats still standing (`cities_held` > 0, V02) before eliminated ones. The leader
  is rank 1.
* lead_changes: turns whose leader differs from the previous turn's
  (Ludii `LeadChange`, which counts changes of the set of leaders per move and
  divides by the moves: T11 breaks every tie here, and we keep the count).
* decisive_turn: the first turn from which the eventual winner leads at every
  turn to the end; the end turn when the winner does not lead at the last turn
  (a science or dominance win by a seat behind on score: decided only by the
  ending). Ludii `DecisivenessMoves` (the first move from which a winner is above
  the decisiveness threshold, the end when never) on score ranks.
* decided_share: decisive_turn / end_turn (Ludii `DecisivenessMoves` is this
  share): near 1, the match is open until its end; near 0, decided at the start.
* stability: mean |change of a seat's rank| per seat and turn, over turns 2..end
  (0: the ranks never move). Ludii `Stability` is the variance of each player's
  state evaluation over the game; ranks stand in for the evaluation, so higher
  is less stable there and here.
* comeback: the winner was not the leader at half the match (turn
  max(1, end_turn // 2)); the turn-limit winner leads at the end by V19, so every
  comeback is a seat that overtook.
* end_turn: the match's duration in turns (Ludii `DurationTurns`).
* eliminations, first_elimination_turn: seats eliminated (V02) and the first
  such turn (null: nobody was).
* largest_gap, largest_gap_turn: the largest lead of the leader over the
  second-ranked standing seat, in score points, and its first turn (Ludii's
  `DecisivenessThreshold` is the highest evaluation a non-winner reaches; this is
  the leader's margin over its nearest rival).

Ludii's other outcome metrics are in the report already, by their own names:
drawishness does not arise (T11 breaks every tie: each finished match has a
winner), timeouts are the turn-limit share (V19), completion is one minus the
error rate, and first-player advantage and balance are the win rates by seat (D1).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import polars as pl

from sim.analysis._frames import finished, nan_to_null, sort_keys
from sim.analysis.paired import ResolutionWarning, observation_tests, significance
from sim.analysis.stats import (
    mcnemar_exact,
    mean_interval,
    paired_share_interval,
    wilson,
)

# the quality table's metrics, in the order the report reads them; comeback is the
# one share (a yes/no per match), the rest are numbers per match
QUALITY_METRICS = ("decisive_turn", "decided_share", "lead_changes", "comeback",
                   "stability", "end_turn", "eliminations", "first_elimination_turn",
                   "largest_gap")
SHARES = ("comeback",)

QUALITY_SCHEMA = {
    "variant": pl.Utf8, "match_id": pl.Utf8, "match_index": pl.Int64, "winner": pl.Int64,
    "victory": pl.Utf8, "end_turn": pl.Int64, "lead_changes": pl.Int64,
    "decisive_turn": pl.Int64, "decided_share": pl.Float64, "stability": pl.Float64,
    "comeback": pl.Boolean, "eliminations": pl.Int64, "first_elimination_turn": pl.Int64,
    "largest_gap": pl.Int64, "largest_gap_turn": pl.Int64,
}
# the columns of the turns table a standing reads; T11's keys, each larger-first
_TURN_COLUMNS = ("match_index", "turn", "seat", "score", "population", "region",
                 "gold_stock", "cities_held")
_T11 = ("score", "population", "region", "gold_stock")
_MATCH = ["variant", "match_index"]


def _grid(frame: pl.DataFrame) -> dict[str, np.ndarray]:
    """One variant's turn rows as (G, S) arrays, G = match × turn groups in match and
    turn order, S seats (each turn of a match has a row per seat: sim.engine.columns.
    turn_columns); the rows are sorted first unless they already are."""
    keys = ["match_index", "turn", "seat"]
    if not _sorted(frame):
        frame = frame.sort(keys)
    seats = frame.select(pl.col("seat").max()).item() + 1 if frame.height else 1
    if frame.height % seats:
        raise ValueError("the turns table has a turn without a row for every seat")
    # 64-bit here whatever was read: the sentinels below are 64-bit
    grid = {c: frame.get_column(c).to_numpy().astype(np.int64).reshape(-1, seats)
            for c in _TURN_COLUMNS}
    if (grid["seat"] != np.arange(seats)).any():
        raise ValueError("the turns table has a turn without a row for every seat")
    return grid


def _sorted(frame: pl.DataFrame) -> bool:
    """The rows are in (match_index, turn, seat) order, as a chunk writes them."""
    m, t, s = (frame.get_column(c).to_numpy() for c in ("match_index", "turn", "seat"))
    dm, dt, ds = np.diff(m), np.diff(t), np.diff(s)
    return bool(np.all((dm > 0) | ((dm == 0) & ((dt > 0) | ((dt == 0) & (ds > 0))))))


def _ranks(grid: dict[str, np.ndarray]) -> np.ndarray:
    """(G, S) int64 ranks, 1 = the leader: 1 + the seats that beat it, seat j beating
    seat i when (standing, T11's keys) of j is larger, compared key by key, or equal
    with j < i (T11's last tiebreak, seat order). Pairwise over S ≤ 6 seats, so no
    sort of the whole table."""
    keys = [grid["cities_held"] > 0, *(grid[k] for k in _T11)]
    n_seats = keys[0].shape[1]
    greater = np.zeros((keys[0].shape[0], n_seats, n_seats), dtype=bool)  # [g, j, i]
    equal = np.ones_like(greater)
    for key in keys:
        j, i = key[:, :, None], key[:, None, :]
        greater |= equal & (j > i)
        equal &= j == i
    before = np.arange(n_seats)[:, None] < np.arange(n_seats)[None, :]
    return 1 + (greater | (equal & before)).sum(axis=1)


def standings(turns: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Each seat's rank at the end of each turn of one variant's turn rows (module
    docstring: T11, standing seats first): match_index, turn, seat, score, standing,
    rank (1 = the leader), in match, turn and seat order."""
    frame = turns.lazy().select(_TURN_COLUMNS).collect()
    if frame.height == 0:
        return pl.DataFrame(schema={"match_index": pl.Int64, "turn": pl.Int64,
                                    "seat": pl.Int64, "score": pl.Int64,
                                    "standing": pl.Boolean, "rank": pl.Int64})
    grid = _grid(frame)
    return pl.DataFrame({c: grid[c].ravel() for c in ("match_index", "turn", "seat", "score")}
                        ).with_columns(pl.Series("standing", (grid["cities_held"] > 0).ravel()),
                                       pl.Series("rank", _ranks(grid).ravel(), pl.Int64))


def _match_metrics(grid: dict[str, np.ndarray], done: pl.DataFrame) -> pl.DataFrame:
    """The turn-based metrics of each match of one variant's grid (_grid) that is in
    `done` (match_index, winner, end_turn): a row per such match."""
    rank = _ranks(grid)
    match, turn = grid["match_index"][:, 0], grid["turn"][:, 0]
    start = np.flatnonzero(np.r_[True, match[1:] != match[:-1]])
    last = np.r_[start[1:], match.size] - 1
    ids = match[start]
    info = pl.DataFrame({"match_index": ids}).join(done, on="match_index", how="left")
    winner = info.get_column("winner").fill_null(-1).to_numpy()
    end_turn = info.get_column("end_turn").fill_null(0).to_numpy()
    per_turn = np.diff(np.r_[start, match.size])
    leader = np.argmin(rank, axis=1)               # seat index of rank 1
    leads = leader == np.repeat(winner, per_turn)
    first = np.zeros(match.size, dtype=bool)
    first[start] = True
    changed = (leader != np.r_[-1, leader[:-1]]) & ~first
    last_behind = np.maximum.reduceat(np.where(leads, 0, turn), start)
    decisive = np.where(leads[last], np.where(last_behind > 0, last_behind + 1, turn[start]),
                        end_turn)
    half = np.maximum(1, end_turn // 2)
    at_half = np.clip(start + (half - turn[start]), start, last)
    comeback = np.where(turn[at_half] == half, leader[at_half] != winner, np.nan)
    second = np.argsort(rank, axis=1)[:, 1] if rank.shape[1] > 1 else leader
    rows = np.arange(match.size)
    gap = np.where(grid["cities_held"][rows, second] > 0,
                   grid["score"][rows, leader] - grid["score"][rows, second], np.nan) \
        if rank.shape[1] > 1 else np.full(match.size, np.nan)
    largest = np.fmax.reduceat(gap, start)
    big = np.iinfo(np.int64).max
    gap_turn = np.minimum.reduceat(np.where(gap == np.repeat(largest, per_turn), turn, big),
                                   start)
    moved = np.abs(rank - np.r_[rank[:1], rank[:-1]]).sum(axis=1) * ~first
    steps = (per_turn - 1) * rank.shape[1]
    stability = np.add.reduceat(moved, start) / np.where(steps > 0, steps, np.nan)
    return pl.DataFrame({
        "match_index": ids, "lead_changes": np.add.reduceat(changed, start),
        "decisive_turn": decisive, "stability": stability,
        "comeback": pl.Series(comeback, nan_to_null=True).cast(pl.Boolean),
        "largest_gap": pl.Series(largest, nan_to_null=True),
        "largest_gap_turn": np.where(gap_turn == big, -1, gap_turn),
    }, strict=False).with_columns(
        pl.col("stability").fill_nan(None),
        pl.when(pl.col("largest_gap").is_not_null()).then(pl.col("largest_gap_turn"))
        .alias("largest_gap_turn"))


def _eliminations(seats: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    # lazy: a scan of the seats table (the report's) reads only the columns grouped
    return seats.lazy().group_by(_MATCH).agg(
        pl.col("eliminated_turn").is_not_null().sum().cast(pl.Int64).alias("eliminations"),
        pl.col("eliminated_turn").min().alias("first_elimination_turn")).collect()


# matches read at a time: a slice of a variant's turn rows (some 200,000 at standard
# length) rather than all of them, so the report's peak memory does not grow with the
# run (the scan skips the other chunks' files by their match_index statistics)
SLICE = 500


def match_slices(match_index: pl.Series, size: int = SLICE) -> list[tuple[int, int]]:
    """(first, last) match index of each run of `size` consecutive finished matches,
    inclusive, in order."""
    ids = match_index.unique().sort().to_list()
    return [(ids[i], ids[min(i + size, len(ids)) - 1]) for i in range(0, len(ids), size)]


def quality_table(turns: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame,
                  seats: pl.DataFrame | pl.LazyFrame,
                  variants: Sequence[str] | None = None) -> pl.DataFrame:
    """The `quality` table: one row per finished match of each variant (QUALITY_SCHEMA;
    the definitions are the module docstring's). `turns` may be the table or its lazy
    scan (sim.analysis.load.scan_run): it is read SLICE matches of one variant at a
    time, only the columns the standings need. `variants`: those of `matches` when None. A finished
    match without turn rows gets nulls for the turn-based metrics."""
    done = finished(matches).select(*_MATCH, "match_id", "winner", "victory", "end_turn")
    if variants is None:
        variants = done.get_column("variant").unique(maintain_order=True).to_list()
    parts = []
    for variant in variants:
        mine = done.filter(pl.col("variant") == variant)
        if mine.height == 0:
            continue
        found = []
        for lo, hi in match_slices(mine.get_column("match_index")):
            # 32-bit columns: every count of the turns table fits, at half the memory
            frame = (turns.lazy().filter(pl.col("variant") == variant,
                                         pl.col("match_index").is_between(lo, hi))
                     .select(pl.col(list(_TURN_COLUMNS)).cast(pl.Int32)).collect())
            if frame.height:
                grid = _grid(frame)
                found.append(_match_metrics(grid, mine.select("match_index", "winner",
                                                              "end_turn")))
        if found:
            mine = mine.join(pl.concat(found), on="match_index", how="left")
        parts.append(mine)
    if not parts:
        return pl.DataFrame(schema=QUALITY_SCHEMA)
    out = pl.concat(parts, how="diagonal_relaxed").join(_eliminations(seats), on=_MATCH,
                                                       how="left")
    out = out.with_columns(pl.col("eliminations").fill_null(0),
                           (pl.col("decisive_turn") / pl.col("end_turn")).alias("decided_share"))
    return out.select([pl.col(c).cast(t) if c in out.columns else pl.lit(None, t).alias(c)
                       for c, t in QUALITY_SCHEMA.items()]).sort(_MATCH)


def _long(quality: pl.DataFrame, metrics: Sequence[str] = QUALITY_METRICS) -> pl.DataFrame:
    """variant, match_index, metric, value (Float64): one row per match and metric of
    `metrics` with a value (a match without an elimination has no
    first_elimination_turn). Its readers take one metric at a time: the long table of
    every metric held 800,000 rows at 100,000 matches (issue 46)."""
    return (quality.select(*_MATCH, *[pl.col(m).cast(pl.Float64) for m in metrics])
            .unpivot(index=_MATCH, variable_name="metric", value_name="value")
            .drop_nulls("value"))


def quality_summary(quality: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Per variant × metric (QUALITY_METRICS): mean, lo, hi, n (matches with a
    value). Numbers: the normal interval of the mean (stats.mean_interval, matches
    are independent); comeback: the share with its Wilson interval."""
    rows = []
    for m in QUALITY_METRICS:  # one metric's long rows at a time (_long)
        for (variant, metric), part in _long(quality, [m]).group_by(["variant", "metric"]):
            rows.append((variant, metric,
                         *_summary_cells(metric, part.get_column("value").to_numpy(),
                                         confidence)))
    out = pl.DataFrame(rows, orient="row", schema={
        "variant": pl.Utf8, "metric": pl.Utf8, "mean": pl.Float64, "lo": pl.Float64,
        "hi": pl.Float64, "n": pl.Int64})
    return sort_keys(out, ["variant", "metric"], {"metric": QUALITY_METRICS})


def _summary_cells(metric: str, values: np.ndarray, confidence: float) -> tuple:
    """(mean, lo, hi, n) of one variant's values (shape (n,)) of `metric`."""
    if metric in SHARES:
        k, n = int(values.sum()), int(values.size)
        lo, hi = wilson(k, n, confidence)
        mean = k / n if n else None
    else:
        mean, lo, hi, n = mean_interval(values, confidence)
    return nan_to_null(mean), nan_to_null(lo), nan_to_null(hi), n


def _share_tests(quality: pl.DataFrame, baseline: str, confidence: float) -> list[dict]:
    """comeback per variant against the baseline: exact McNemar, Newcombe's interval."""
    base = quality.filter(pl.col("variant") == baseline).select(
        "match_index", pl.col("comeback").alias("base"))
    rows = []
    for (variant,), part in quality.filter(pl.col("variant") != baseline).group_by(["variant"]):
        pairs = part.join(base, on="match_index").drop_nulls(["comeback", "base"])
        if pairs.height == 0:
            continue
        v, b = pairs.get_column("comeback"), pairs.get_column("base")
        gain, loss, both = int((v & ~b).sum()), int((b & ~v).sum()), int((v & b).sum())
        diff, lo, hi = paired_share_interval(both, gain, loss, pairs.height - both - gain - loss,
                                             confidence)
        rows.append({"variant": variant, "metric": "comeback",
                     "baseline_value": float(b.mean()), "variant_value": float(v.mean()),
                     "difference": diff, "lo": lo, "hi": hi, "p_value": mcnemar_exact(gain, loss),
                     "min_p_value": mcnemar_exact(gain + loss, 0), "n_pairs": pairs.height})
    return rows


def quality_tests(quality: pl.DataFrame, baseline: str, confidence: float = 0.95,
                  method: str = "holm") -> pl.DataFrame:
    """Each variant's paired difference from the baseline on every quality metric,
    on the same matches (common random numbers): paired t-tests for the numbers
    (sim.analysis.paired.observation_tests), exact McNemar with Newcombe's interval
    for comeback, then one correction (`method`, paired.significance) over every
    metric × variant. Columns as paired_metric_tests', plus p_adjusted, changed,
    resolution_limited (a comeback test whose discordant pairs are too few to reach
    significance after the correction: flagged here, not warned about)."""
    numbers = pl.concat([observation_tests(_long(quality, [m]), baseline, confidence)
                         for m in QUALITY_METRICS if m not in SHARES])
    shares = pl.DataFrame(_share_tests(quality, baseline, confidence), schema=numbers.schema,
                          orient="row")
    tests = sort_keys(pl.concat([numbers, shares]), ["variant", "metric"],
                      {"metric": QUALITY_METRICS})
    if tests.height == 0:
        return tests
    # the column resolution_limited flags what the warning would say, row by row (a
    # comeback test with few discordant pairs); the report prints the table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResolutionWarning)
        return significance(tests, method=method)


def distribution(quality: pl.DataFrame, metric: str, width: int = 1,
                 top: int | None = None) -> pl.DataFrame:
    """How a metric spreads over each variant's matches, for small multiples:
    variant, bin (the value rounded down to a multiple of `width`; values above `top`
    counted at `top`), matches, share (of the variant's matches with a value)."""
    value = pl.col(metric)
    if top is not None:
        value = value.clip(upper_bound=top)
    return (quality.filter(pl.col(metric).is_not_null())
            .select("variant", ((value // width) * width).cast(pl.Int64).alias("bin"))
            .group_by("variant", "bin").agg(pl.len().cast(pl.Int64).alias("matches"))
            .with_columns((pl.col("matches") / pl.col("matches").sum().over("variant"))
                          .alias("share"))
            .sort("variant", "bin"))


# metric -> (label, unit, scale) of a paired difference in words (headline.UNITS' form)
UNITS: dict[str, tuple[str, str, float]] = {
    "decisive_turn": ("decisive turn", "turns", 1.0),
    "decided_share": ("decided share (decisive turn / end turn)", "points", 100.0),
    "lead_changes": ("lead changes", "per match", 1.0),
    "comeback": ("comebacks", "points", 100.0),
    "stability": ("rank places moved per seat and turn", "", 1.0),
    "end_turn": ("end turn", "turns", 1.0),
    "eliminations": ("eliminations", "per match", 1.0),
    "first_elimination_turn": ("first elimination", "turns", 1.0),
    "largest_gap": ("largest lead", "points of score", 1.0),
}


def change_words(tests: pl.DataFrame, variant: str) -> list[str]:
    """The quality metrics a variant changed (quality_tests' `changed` rows), each in
    words: "end turn −12.3 turns [−13.1, −11.5]"."""
    out = []
    for r in tests.filter((pl.col("variant") == variant) & pl.col("changed")).iter_rows(
            named=True):
        label, unit, scale = UNITS[r["metric"]]
        digits = 3 if r["metric"] == "stability" else 1

        def signed(x: float, digits: int = digits, scale: float = scale) -> str:
            return f"{x * scale:+.{digits}f}".replace("-", "−")

        interval = f" [{signed(r['lo'])}, {signed(r['hi'])}]" \
            if r["lo"] is not None and r["hi"] is not None else ""
        out.append(f"{label} {signed(r['difference'])}{' ' + unit if unit else ''}{interval}")
    return out


def _value(summary: pl.DataFrame, variant: str, metric: str) -> float | None:
    row = summary.filter((pl.col("variant") == variant) & (pl.col("metric") == metric))
    return row.item(0, "mean") if row.height else None


def quality_sentences(summary: pl.DataFrame, variant: str) -> str:
    """How a variant's matches play, in the words a designer reads: "Matches are
    decided at turn 41 of 96 on average (43 % of the way); the lead changes 3.2
    times a match; 18 % are comebacks; …". "" for a variant without a row."""
    def v(metric: str) -> float | None:
        return _value(summary, variant, metric)

    decisive, end, share = v("decisive_turn"), v("end_turn"), v("decided_share")
    if decisive is None or end is None:
        return ""
    parts = [f"Matches are decided at turn {decisive:.0f} of {end:.0f} on average "
             f"({share:.0%} of the way through)" if share is not None else
             f"Matches are decided at turn {decisive:.0f} of {end:.0f} on average"]
    if (lead := v("lead_changes")) is not None:
        parts.append(f"the lead changes {lead:.1f} times a match")
    if (comeback := v("comeback")) is not None:
        parts.append(f"{comeback:.0%} are comebacks (the winner was behind at half time)")
    if (moved := v("stability")) is not None:
        parts.append(f"a seat moves {moved:.2f} rank places a turn")
    if (out := v("eliminations")) is not None:
        first = v("first_elimination_turn")
        when = f", the first out at turn {first:.0f} on average" if first is not None else ""
        parts.append(f"{out:.1f} seats are eliminated a match{when}")
    if (gap := v("largest_gap")) is not None:
        parts.append(f"the largest lead reaches {gap:.0f} points")
    return "; ".join(parts) + "."


__all__ = ["QUALITY_METRICS", "QUALITY_SCHEMA", "SHARES", "SLICE", "UNITS", "change_words",
           "distribution", "match_slices", "quality_sentences",
           "quality_summary", "quality_table", "quality_tests", "standings"]
