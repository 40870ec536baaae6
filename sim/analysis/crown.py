"""What a designer asks of Crown (../shared/RULES-crown.md, last section), from a Crown
run's outcome tables (sim.outputs.games.CROWN_SCHEMAS), per variant:

- side win rates and draws by team size, each with its 95 % Wilson interval (K13, L4);
- the first-in-order edge (K05): among decided matches where one side's player was
  first in more waves, how often that side won;
- the fault-round leader's conversion (L6): how often the side ahead after the fault
  round won;
- how often Surge and the lead cycle decide an attack (K07): winning attacks that
  would have lost without that bonus, of all winning attacks;
- lead types (K03): each lead's share of the rolls, its attacks and their win rate;
- the score terms' shares of all points (K10, K11);
- and each per-match figure's paired difference from the baseline variant (match i
  of every variant plays the same streams, so the pairs share their draws).

Every function takes the `matches` frame of a run (with its `variant` column) and
returns a polars frame; the report (sim.report.crown) only lays them out.
"""

from __future__ import annotations

import math

import polars as pl

from sim.analysis import stats
from sim.rules.crown import ATTACK_COUNTS, SCORE_TERMS, SIDES, WIDGETS, term_column

SIDE_A, SIDE_B = SIDES
DRAW = "draw"


def _wilson_cols(frame: pl.DataFrame, k: str, n: str, name: str) -> pl.DataFrame:
    """`frame` with name (k / n), name_lo and name_hi (its 95 % Wilson interval);
    null where n is 0."""
    lo, hi = stats.wilson_bounds(frame[k].to_numpy(), frame[n].to_numpy())
    share = [kk / nn if nn else None for kk, nn in zip(frame[k], frame[n], strict=True)]
    return frame.with_columns(
        pl.Series(name, share, dtype=pl.Float64),
        pl.Series(f"{name}_lo", [None if math.isnan(x) else x for x in lo], dtype=pl.Float64),
        pl.Series(f"{name}_hi", [None if math.isnan(x) else x for x in hi], dtype=pl.Float64))


def side_wins(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant and team sizes (team_a v team_b): matches, side A's and B's wins and
    the draws, each a share with its Wilson interval (K13)."""
    counts = (matches.group_by("variant", "team_a", "team_b", maintain_order=True)
              .agg(pl.len().alias("matches"),
                   (pl.col("winner") == SIDE_A).sum().alias("a_wins"),
                   (pl.col("winner") == SIDE_B).sum().alias("b_wins"),
                   (pl.col("winner") == DRAW).sum().alias("draws")))
    for k, name in (("a_wins", "side A"), ("b_wins", "side B"), ("draws", "draw")):
        counts = _wilson_cols(counts, k, "matches", name)
    return counts


def conversions(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant, two conversions with Wilson intervals: `first in order` (K05), of
    decided matches where one side was first in more waves, those it won; `fault-round
    leader` (L6), of matches with a side ahead after the fault round, those it won."""
    decided = pl.col("winner") != DRAW
    rows = (matches.group_by("variant", maintain_order=True)
            .agg((decided & pl.col("first_side").is_not_null()).sum().alias("first_n"),
                 (decided & (pl.col("first_side") == pl.col("winner"))).sum()
                 .alias("first_won"),
                 pl.col("fault_leader").is_not_null().sum().alias("fault_n"),
                 (pl.col("fault_leader") == pl.col("winner")).sum().alias("fault_won")))
    rows = _wilson_cols(rows, "first_won", "first_n", "first in order wins")
    return _wilson_cols(rows, "fault_won", "fault_n", "fault-round leader wins")


def decided_attacks(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant: winning attacks, and the shares of them that Surge and the lead
    cycle decided (K07: the attack would have lost without that bonus), with Wilson
    intervals (over attacks pooled across matches, as docs/crown.md's figures)."""
    def total(count: str) -> pl.Expr:
        return pl.sum_horizontal(f"{count}_{w}" for w in WIDGETS).sum()
    rows = (matches.group_by("variant", maintain_order=True)
            .agg(total("attacks").alias("attacks"), total("wins").alias("winning attacks"),
                 total("surge_decided").alias("surge"), total("cycle_decided").alias("cycle")))
    rows = _wilson_cols(rows, "surge", "winning attacks", "Surge decided")
    return _wilson_cols(rows, "cycle", "winning attacks", "cycle decided")


def lead_types(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant and lead type (K03): its share of the rolls, its attacks, and the
    share of them won with a Wilson interval."""
    sums = matches.group_by("variant", maintain_order=True).agg(
        *(pl.col(f"leads_{w}").sum() for w in WIDGETS),
        *(pl.col(f"{c}_{w}").sum() for c in ATTACK_COUNTS[:2] for w in WIDGETS))
    long = pl.concat([sums.select(
        "variant", pl.lit(w).alias("lead"), pl.col(f"leads_{w}").alias("rolls"),
        pl.col(f"attacks_{w}").alias("attacks"), pl.col(f"wins_{w}").alias("won"))
        for w in WIDGETS])
    long = long.with_columns((pl.col("rolls") / pl.col("rolls").sum().over("variant"))
                             .alias("share of rolls"))
    order = {v: i for i, v in enumerate(matches["variant"].unique(maintain_order=True))}
    long = long.sort(pl.col("variant").replace_strict(order, return_dtype=pl.Int64),
                     pl.col("lead").replace_strict({w: i for i, w in enumerate(WIDGETS)},
                                                   return_dtype=pl.Int64))
    return _wilson_cols(long, "won", "attacks", "attacks won")


def score_terms(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant and score term (K10, K11): its points, both sides, and its share of
    all points."""
    sums = matches.group_by("variant", maintain_order=True).agg(
        pl.col(term_column(t, s)).sum() for t in SCORE_TERMS for s in SIDES)
    long = pl.concat([sums.select(
        "variant", pl.lit(t).alias("term"),
        pl.sum_horizontal(term_column(t, s) for s in SIDES).alias("points"))
        for t in SCORE_TERMS])
    order = {v: i for i, v in enumerate(matches["variant"].unique(maintain_order=True))}
    return (long.with_columns((pl.col("points") / pl.col("points").sum().over("variant"))
                              .alias("share of points"))
            .sort(pl.col("variant").replace_strict(order, return_dtype=pl.Int64)))


# per-match figures whose paired difference from the baseline is shown: name -> an
# expression over one row of `matches` (a 0/1 indicator or a share; null: no value)
def _per_match() -> dict[str, pl.Expr]:
    def total(count: str) -> pl.Expr:
        return pl.sum_horizontal(f"{count}_{w}" for w in WIDGETS)
    rolls = pl.sum_horizontal(f"leads_{w}" for w in WIDGETS)
    points = pl.sum_horizontal(term_column(t, s) for t in SCORE_TERMS for s in SIDES)
    wins = total("wins")
    out = {
        "side A wins": (pl.col("winner") == SIDE_A).cast(pl.Float64),
        "draw": (pl.col("winner") == DRAW).cast(pl.Float64),
        "first in order wins": pl.when(pl.col("first_side").is_not_null()
                                       & (pl.col("winner") != DRAW))
        .then((pl.col("first_side") == pl.col("winner")).cast(pl.Float64)),
        "fault-round leader wins": pl.when(pl.col("fault_leader").is_not_null())
        .then((pl.col("fault_leader") == pl.col("winner")).cast(pl.Float64)),
        "Surge-decided share of winning attacks": pl.when(wins > 0)
        .then(total("surge_decided") / wins),
        "cycle-decided share of winning attacks": pl.when(wins > 0)
        .then(total("cycle_decided") / wins),
    }
    out.update({f"{w} leads, share of rolls": pl.when(rolls > 0)
                .then(pl.col(f"leads_{w}") / rolls) for w in WIDGETS})
    out.update({f"{t} points, share": pl.when(points > 0).then(
        pl.sum_horizontal(term_column(t, s) for s in SIDES) / points)
        for t in SCORE_TERMS})
    return out


def paired_differences(matches: pl.DataFrame, baseline: str,
                       confidence: float = 0.95) -> pl.DataFrame:
    """Per variant other than `baseline` and per-match figure (_per_match): the
    variant's mean, the baseline's, their paired difference over the matches both
    played (same match_index, same streams) with its t interval and p-value
    (stats.paired_t; for a 0/1 indicator the paired t on 0/1 differences), and the
    pairs it rests on. A match with no value for a figure in either variant (a draw
    for the conversions) is left out of that figure's pairs."""
    figures = _per_match()
    wide = matches.select("variant", "match_index",
                          *(expr.alias(name) for name, expr in figures.items()))
    base = wide.filter(pl.col("variant") == baseline).drop("variant")
    rows = []
    for variant in wide["variant"].unique(maintain_order=True):
        if variant == baseline:
            continue
        joined = wide.filter(pl.col("variant") == variant).drop("variant").join(
            base, on="match_index", suffix="__base")
        for name in figures:
            pair = joined.select(name, f"{name}__base").drop_nulls()
            mine, theirs = pair[name].to_numpy(), pair[f"{name}__base"].to_numpy()
            diff, lo, hi, p, n = stats.paired_t(mine - theirs, confidence)
            nan = math.isnan
            rows.append({"variant": variant, "figure": name,
                         "variant mean": float(mine.mean()) if n else None,
                         "baseline mean": float(theirs.mean()) if n else None,
                         "difference": None if nan(diff) else diff,
                         "lo": None if nan(lo) else lo, "hi": None if nan(hi) else hi,
                         "p": None if nan(p) else p, "pairs": n})
    schema = {"variant": pl.Utf8, "figure": pl.Utf8, "variant mean": pl.Float64,
              "baseline mean": pl.Float64, "difference": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "p": pl.Float64, "pairs": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


# ---- two levels of play (issue 48: Crown's two-skill report, as the hex game's) ----
# an experiment's `skills = [a, b]` plays every variant with every player of both sides
# at skill a and at skill b on the same seeds (sim.runner.experiments); each change is
# then read at both levels and its interaction with skill tested
# (sim.analysis.robustness, whose arms, interaction test and verdicts these reuse)
OUTCOMES = (SIDE_A, SIDE_B, DRAW)


def side_skill_of(variant: dict) -> int | None:
    """The one AI skill both sides of a provenance variant play at (`side_skill`, none
    given: 0); None when the sides differ or play at random (no level)."""
    a, b = variant.get("side_skill") or (0, 0)
    return a if a == b and a >= 0 else None


def won(matches: pl.DataFrame, variant: str, outcome: str) -> pl.DataFrame:
    """match_index -> x: 1.0 when the variant's match ended with `outcome` (a side's
    win or a draw, K13); robustness's indicators for Crown."""
    return (matches.filter(pl.col("variant") == variant)
            .select("match_index", (pl.col("winner") == outcome).cast(pl.Float64).alias("x")))


def skill_effects(matches: pl.DataFrame, provenance: dict, baseline: str,
                  confidence: float = 0.95) -> pl.DataFrame:
    """Each change's paired effect on each outcome share (side A wins, side B wins,
    draws: metric "winner=<outcome>") at each skill, against the baseline's tables at
    the same skill on the same matches: the columns of
    sim.analysis.robustness.skill_effects (difference, its paired t interval and
    p-value, p_holm across the rows of one skill, changed, n_pairs)."""
    from sim.analysis.robustness import skill_arms

    schema = {"change": pl.Utf8, "skill": pl.Int64, "variant": pl.Utf8, "base": pl.Utf8,
              "metric": pl.Utf8, "difference": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "p_value": pl.Float64, "p_holm": pl.Float64,
              "changed": pl.Boolean, "n_pairs": pl.Int64}
    rows = []
    for variant, skill, change, base in skill_arms(provenance, baseline,
                                                   side_skill_of).iter_rows():
        for outcome in OUTCOMES:
            pair = won(matches, variant, outcome).join(won(matches, base, outcome),
                                                       on="match_index", suffix="_base")
            diff, lo, hi, p, n = stats.paired_t((pair["x"] - pair["x_base"]).to_numpy(),
                                                confidence)
            rows.append({"change": change, "skill": skill, "variant": variant,
                         "base": base, "metric": f"winner={outcome}",
                         "difference": None if math.isnan(diff) else diff,
                         "lo": None if math.isnan(lo) else lo,
                         "hi": None if math.isnan(hi) else hi,
                         "p_value": None if math.isnan(p) else p, "n_pairs": n})
    if not rows:
        return pl.DataFrame(schema=schema)
    out = []
    for skill in dict.fromkeys(r["skill"] for r in rows):
        part = [r for r in rows if r["skill"] == skill]
        adjusted = stats.holm([r["p_value"] for r in part])
        for r, q in zip(part, adjusted, strict=True):
            r["p_holm"] = None if q is None or q != q else q
            r["changed"] = r["p_holm"] is not None and r["p_holm"] < 1.0 - confidence
            out.append(r)
    return pl.DataFrame(out, schema=schema).sort("change", "metric", "skill")


def skill_interactions(matches: pl.DataFrame, effects: pl.DataFrame,
                       confidence: float = 0.95) -> pl.DataFrame:
    """skill_effects' changes side by side at the two skills, each with its interaction
    test (the per-match contrast of the four arms) and verdict: the columns of
    sim.analysis.robustness.skill_interactions, Holm over these tests."""
    from sim.analysis.robustness import skill_interactions as side_by_side

    return side_by_side(matches, effects, confidence, indicators=won)


def winner_mix(matches: pl.DataFrame) -> pl.DataFrame:
    """Per variant: side A's, side B's and the draws' shares of its matches with their
    simultaneous intervals (stats.multinomial_intervals): Crown's outcome mix, where
    the hex game has its victory types."""
    rows = []
    for variant in matches["variant"].unique(maintain_order=True):
        mine = matches.filter(pl.col("variant") == variant)
        counts = [int((mine["winner"] == w).sum()) for w in (SIDE_A, SIDE_B, DRAW)]
        bounds = stats.multinomial_intervals(counts)
        for w, k, (lo, hi) in zip((SIDE_A, SIDE_B, DRAW), counts, bounds, strict=True):
            rows.append({"variant": variant, "winner": w, "matches": k,
                         "share": k / max(mine.height, 1), "lo": float(lo), "hi": float(hi)})
    return pl.DataFrame(rows)


def failures(matches: pl.DataFrame, errors: pl.DataFrame) -> pl.DataFrame:
    """Per variant: matches played (finished or failed), failed, and the first error's
    message: what the report's failure line (sim.report.html.failure_line) reads."""
    played = pl.concat([matches.select("variant", "match_index"),
                        errors.select("variant", "match_index")])
    failed = errors.group_by("variant").agg(pl.len().alias("failed"),
                                            pl.col("message").first().alias("first_error"))
    return (played.group_by("variant").agg(pl.len().alias("played"))
            .join(failed, on="variant", how="left")
            .with_columns(pl.col("failed").fill_null(0)).sort("variant"))
