"""sim.analysis: statistics and metrics on small hand-built outcome tables.

Every expected number below was worked out by hand (the arithmetic is in the
comments). Rule IDs: V08–V11 capital falls and revolts, V16/V17 Observatory,
V18 dominance counter, T13 score terms (gold term).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sim.analysis import metrics as M
from sim.analysis.load import RunFolderError, load_run
from sim.analysis.stats import (
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    mean_interval,
    multinomial_intervals,
    wilson,
)
from sim.outputs.schemas import SCHEMAS

EV_SCHEMA = {**SCHEMAS["events"], "variant": pl.Utf8}


def frame(table: str, rows: list[dict], variant: str | None = None) -> pl.DataFrame:
    """A typed table from partial rows (missing columns null); `variant` added."""
    schema = {**SCHEMAS[table], "variant": pl.Utf8}
    full = [{k: r.get(k, variant if k == "variant" else None) for k in schema} for r in rows]
    return pl.DataFrame(full, schema=schema, orient="row")


def matches_of(variant: str, victories: list[str], end_turns: list[int] | None = None,
               indices: list[int] | None = None) -> pl.DataFrame:
    idx = indices if indices is not None else list(range(len(victories)))
    ends = end_turns if end_turns is not None else [50] * len(victories)
    return frame("matches", [{"match_id": f"{variant}:{i}", "match_index": i, "victory": v,
                              "end_turn": e, "winner": 0}
                             for i, v, e in zip(idx, victories, ends, strict=True)], variant)


def row(d: pl.DataFrame, **keys) -> dict:
    sel = d
    for k, v in keys.items():
        sel = sel.filter(pl.col(k) == v)
    assert sel.height == 1, (keys, sel)
    return sel.row(0, named=True)


# ---------------------------------------------------------------- statistics

def test_wilson_textbook_value():
    # p=0.8, z=1.959964: centre (0.8 + z²/20)/(1 + z²/10) = 0.71681,
    # half z·sqrt(0.016 + z²/400)/(1 + z²/10) = 0.22657
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=5e-5)
    assert hi == pytest.approx(0.9433, abs=5e-5)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    lo99, hi99 = wilson(8, 10, 0.99)
    assert lo99 < lo and hi99 > hi
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_multinomial_intervals_are_goodman_that_is_bonferroni_wilson():
    # K=4 categories at 95% together: each Wilson at 1 - 0.05/4 = 0.9875 (z = 2.4977):
    # k=8, n=10 → (0.4113, 0.9582)
    counts = [8, 2, 0, 0]
    out = multinomial_intervals(counts)
    assert out[0] == pytest.approx((0.4113, 0.9582), abs=5e-5)
    # Goodman (1965) is exactly this: every category's Wilson interval at 1 - alpha/K
    assert [b for pair in out for b in pair] == pytest.approx(
        [b for c in counts for b in wilson(c, 10, 0.9875)], abs=1e-12)
    assert out[2][0] == 0.0 and out[2][1] == pytest.approx(wilson(0, 10, 0.9875)[1], abs=1e-12)
    assert multinomial_intervals([]) == []


def test_mean_interval_normal_approximation():
    # mean 3, sd sqrt(2.5)=1.5811, half 1.959964·1.5811/√5 = 1.3859
    mean, lo, hi, n = mean_interval([1, 2, 3, 4, 5, float("nan")])
    assert (mean, n) == (3.0, 5)
    assert (lo, hi) == pytest.approx((1.6141, 4.3859), abs=5e-5)
    assert math.isnan(mean_interval([2.0])[1])


def test_mcnemar_exact_is_the_two_sided_binomial():
    # b=3, c=10: P(X<=3 | n=13, 1/2) = (1+13+78+286)/8192 = 378/8192; p = 2·378/8192
    assert mcnemar_exact(3, 10) == pytest.approx(756 / 8192, rel=1e-12)
    assert mcnemar_exact(10, 3) == mcnemar_exact(3, 10)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0
    # the log-space branch (n > 2000) against exact integers
    b, c = 1000, 1130
    exact = 2 * sum(math.comb(b + c, i) for i in range(b + 1)) / 2 ** (b + c)
    assert mcnemar_exact(b, c) == pytest.approx(exact, rel=1e-9)


def test_holm_and_bh_worked_example():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 × 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
    # running max 0.02, 0.03, 0.06, 0.06
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: × 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04; running min from the top: same
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    nan = holm([0.01, None, 0.02])
    assert nan[0] == pytest.approx(0.02) and math.isnan(nan[1]) and nan[2] == pytest.approx(0.02)
    assert holm([]) == [] and benjamini_hochberg([]) == []


def test_bh_and_holm_on_the_benjamini_hochberg_1995_example():
    """The 15 p-values of Benjamini & Hochberg (1995): at 0.05 BH rejects 4, Holm 3."""
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
         0.4262, 0.5719, 0.6528, 0.7590, 1.0]
    assert sum(a <= 0.05 for a in benjamini_hochberg(p)) == 4
    assert sum(a <= 0.05 for a in holm(p)) == 3


# ---------------------------------------------------------------- victories

def test_victory_frequencies_counts_shares_and_zero_rows():
    m = pl.concat([matches_of("a", ["science"] * 8 + ["conquest"] * 2),
                   matches_of("b", ["turn_limit"] * 3 + ["dominance"])])
    out = M.victory_frequencies(m)
    assert out.columns == ["variant", "victory", "wins", "matches", "share", "lo", "hi",
                           "lo_simultaneous", "hi_simultaneous"]
    assert out.select("variant", "victory").rows() == [
        ("a", "conquest"), ("a", "science"), ("a", "dominance"), ("a", "turn_limit"),
        ("b", "conquest"), ("b", "science"), ("b", "dominance"), ("b", "turn_limit")]
    sci = row(out, variant="a", victory="science")
    assert (sci["wins"], sci["matches"], sci["share"]) == (8, 10, 0.8)
    assert (sci["lo"], sci["hi"]) == pytest.approx((0.4902, 0.9433), abs=5e-5)
    assert (sci["lo_simultaneous"], sci["hi_simultaneous"]) == pytest.approx((0.4113, 0.9582),
                                                                              abs=5e-5)
    zero = row(out, variant="b", victory="science")
    assert (zero["wins"], zero["matches"], zero["share"], zero["lo"]) == (0, 4, 0.0, 0.0)
    assert "human_out" not in out.get_column("victory").to_list()
    with_human = M.victory_frequencies(pl.concat([m, matches_of("b", ["human_out"], indices=[9])]))
    assert with_human.filter(pl.col("variant") == "b").get_column("victory").to_list()[-1] \
        == "human_out"
    assert row(with_human, variant="a", victory="human_out")["wins"] == 0


def test_paired_victory_tests_pair_by_match_index():
    base = matches_of("base", ["science", "science", "conquest", "turn_limit", "science",
                               "dominance"])
    # rows in another order: pairing must follow match_index, not row order
    var = matches_of("v", ["science", "science", "conquest", "conquest", "science", "science"],
                     indices=[5, 4, 2, 1, 0, 3])
    out = M.paired_victory_tests(pl.concat([var, base]), "base")
    assert out.columns == ["variant", "metric", "baseline_value", "variant_value", "difference",
                           "lo", "hi", "p_value", "min_p_value", "n_pairs", "discordant_gain",
                           "discordant_loss"]
    assert out.get_column("variant").unique().to_list() == ["v"]
    assert out.get_column("metric").to_list() == [
        "victory=conquest", "victory=science", "victory=dominance", "victory=turn_limit"]
    # by index: base S S C T S D / variant S C C S S S
    sci = row(out, metric="victory=science")
    assert (sci["n_pairs"], sci["discordant_gain"], sci["discordant_loss"]) == (6, 2, 1)
    assert sci["baseline_value"] == pytest.approx(3 / 6)
    assert sci["variant_value"] == pytest.approx(4 / 6)
    assert sci["difference"] == pytest.approx(1 / 6)
    assert sci["p_value"] == pytest.approx(mcnemar_exact(2, 1)) == 1.0
    dom = row(out, metric="victory=dominance")
    assert (dom["discordant_gain"], dom["discordant_loss"]) == (0, 1)
    with pytest.raises(ValueError):
        M.paired_victory_tests(base, "nope")


def test_paired_victory_tests_detect_a_planted_science_shift():
    """V16: a variant with science wins 0.2 more often over 400 paired matches is flagged
    (small Holm-adjusted p, changed=True); an identical variant has no test to compute
    (no discordant pair, no spread): null p everywhere, left out of the Holm family."""
    rng = np.random.default_rng(3)
    n = 400
    cats = np.array(["conquest", "science", "dominance", "turn_limit"])
    base = cats[rng.choice(4, size=n, p=[0.3, 0.3, 0.2, 0.2])]
    up = cats[rng.choice(4, size=n, p=[0.2, 0.5, 0.15, 0.15])]
    ends = rng.integers(30, 80, size=n).tolist()
    m = pl.concat([matches_of("base", base.tolist(), ends), matches_of("up", up.tolist(), ends),
                   matches_of("same", base.tolist(), ends)])
    empty_seats = frame("seats", [])
    empty_events = frame("events", [])
    tests = pl.concat([M.paired_victory_tests(m, "base"),
                       M.paired_metric_tests(m, empty_seats, empty_events, "base")],
                      how="diagonal")
    # the identical variant's tests cannot be computed (no discordant pair; end turns and
    # capital falls alike in every pair, as the up variant's): Holm counts the up
    # variant's four victory tests only
    with warnings.catch_warnings():
        warnings.simplefilter("error", M.ResolutionWarning)
        out = M.significance(tests)
    assert out.get_column("p_value").drop_nulls().len() == 4
    sci = row(out, variant="up", metric="victory=science")
    assert sci["difference"] == pytest.approx(0.2, abs=0.07)
    assert sci["p_adjusted"] < 1e-3 and sci["changed"]
    same = out.filter(pl.col("variant") == "same")
    assert same.get_column("p_value").null_count() == same.height
    assert not same.get_column("changed").any()


# ---------------------------------------------------------------- paired continuous metrics

def test_t13_v08_paired_metric_tests_on_hand_built_matches():
    """end_turn, winner_gold_share and standing_gold_share (T13's gold term) and
    capital_falls (V08), paired by match_index."""
    m = pl.concat([matches_of("base", ["science"] * 3, [10, 20, 30]),
                   matches_of("v", ["science"] * 3, [33, 12, 21], indices=[2, 0, 1])])
    seats = []
    # (variant, match, seat, winner, score, gold_points); every seat standing but seat 1 of
    # base match 1 (eliminated, score 0)
    for v, i, s, w, score, gold in [
        ("base", 0, 0, True, 100, 10), ("base", 0, 1, False, 50, 0),
        ("base", 1, 0, True, 100, 20), ("base", 1, 1, False, 0, 0),
        ("base", 2, 1, True, 80, 8), ("base", 2, 0, False, 40, 4),
        ("v", 0, 0, True, 100, 30), ("v", 0, 1, False, 50, 10),
        ("v", 1, 0, True, 100, 20), ("v", 1, 1, False, 100, 0),
        ("v", 2, 1, True, 0, 0), ("v", 2, 0, False, 40, 4),
    ]:
        seats.append({"match_id": f"{v}:{i}", "match_index": i, "seat": s, "winner": w,
                      "alive": score > 0, "score": score, "gold_points": gold, "variant": v})
    seats_df = frame("seats", seats)
    events = frame("events", [
        {"match_id": "v:0", "match_index": 0, "event": 0, "kind": "capital_fall", "variant": "v"},
        {"match_id": "v:0", "match_index": 0, "event": 1, "kind": "capital_fall", "variant": "v"},
        {"match_id": "v:2", "match_index": 2, "event": 0, "kind": "capital_fall", "variant": "v"},
        {"match_id": "base:2", "match_index": 2, "event": 0, "kind": "found", "variant": "base"},
    ])
    out = M.paired_metric_tests(m, seats_df, events, "base")
    assert out.columns == ["variant", "metric", "baseline_value", "variant_value", "difference",
                           "lo", "hi", "p_value", "min_p_value", "n_pairs"]
    assert out.get_column("metric").to_list() == list(M.PAIRED_METRICS)
    end = row(out, metric="end_turn")
    # diffs by index: 12-10, 21-20, 33-30 = 2, 1, 3: mean 2, sd 1, se 1/√3 = 0.57735;
    # paired t = 3.4641 on 2 df: p = 0.074180, half-width t(0.975, 2)·se = 4.302653·0.57735
    assert (end["baseline_value"], end["variant_value"], end["difference"]) == (20.0, 22.0, 2.0)
    assert (end["lo"], end["hi"]) == pytest.approx((2 - 2.484138, 2 + 2.484138), abs=1e-6)
    assert end["p_value"] == pytest.approx(0.074180, abs=1e-6) and end["n_pairs"] == 3
    assert end["min_p_value"] == 0.0
    # winner share: base 0.1, 0.2, 0.1; v 0.3, 0.2, null (score 0) → pairs 0, 1
    win = row(out, metric="winner_gold_share")
    assert win["n_pairs"] == 2
    assert win["difference"] == pytest.approx(0.1)
    # standing seats with score > 0 in both matches of a pair (the common survivors),
    # each weighing the same: base's match 1 seat 1 and v's match 2 seat 1 are out, so
    # seats (0, 0), (0, 1), (1, 0), (2, 0): base 0.1, 0, 0.2, 0.1; v 0.3, 0.2, 0.2, 0.1
    standing = row(out, metric="standing_gold_share")
    assert standing["n_pairs"] == 3
    assert standing["baseline_value"] == pytest.approx(0.4 / 4)
    assert standing["variant_value"] == pytest.approx(0.8 / 4)
    assert standing["difference"] == pytest.approx(0.1)
    falls = row(out, metric="capital_falls")
    assert (falls["baseline_value"], falls["variant_value"], falls["difference"]) == \
        (0.0, 1.0, 1.0)


def test_identical_variants_have_no_test_to_compute():
    rng = np.random.default_rng(5)
    vic = rng.choice(["science", "conquest", "turn_limit"], size=60).tolist()
    ends = rng.integers(20, 90, size=60).tolist()
    m = pl.concat([matches_of("base", vic, ends), matches_of("copy", vic, ends)])
    tests = pl.concat([M.paired_victory_tests(m, "base"),
                       M.paired_metric_tests(m, frame("seats", []), frame("events", []),
                                             "base")], how="diagonal")
    # no discordant pair, no spread: every p null, and none counted by a correction
    assert tests.get_column("p_value").null_count() == tests.height
    assert not M.significance(tests, "bh").get_column("changed").any()


def _aa_dataset(rng: np.random.Generator, n: int) -> tuple[pl.DataFrame, ...]:
    """Two variants drawn independently from the same distributions (an A/A test)."""
    matches, seats, events = [], [], []
    cats = np.array(["conquest", "science", "dominance", "turn_limit"])
    for v in ("base", "aa"):
        vic = cats[rng.choice(4, size=n, p=[0.3, 0.35, 0.15, 0.2])]
        ends = rng.integers(30, 90, size=n)
        matches.append(pl.DataFrame({"variant": v, "match_index": np.arange(n),
                                     "match_id": [f"{v}:{i}" for i in range(n)],
                                     "victory": vic, "end_turn": ends,
                                     "winner": rng.integers(0, 4, size=n)}))
        score = rng.integers(1, 200, size=(n, 4))
        gold = (score * rng.uniform(0, 0.3, size=(n, 4))).astype(np.int64)
        winner = rng.integers(0, 4, size=n)
        seats.append(pl.DataFrame({
            "variant": v, "match_index": np.repeat(np.arange(n), 4),
            "seat": np.tile(np.arange(4), n), "score": score.ravel(),
            "gold_points": gold.ravel(), "alive": rng.random(4 * n) < 0.8,
            "winner": (np.tile(np.arange(4), n) == np.repeat(winner, 4))}))
        falls = rng.poisson(1.0, size=n)
        events.append(pl.DataFrame({"variant": v, "match_index": np.repeat(np.arange(n), falls),
                                    "kind": "capital_fall"}))
    return pl.concat(matches), pl.concat(seats), pl.concat(events)


def test_paired_metric_tests_do_not_depend_on_the_order_of_the_rows():
    """The same run read twice may come back in another row order (polars' joins and
    scans): the fits must give the same bits, or two reports of one run differ."""
    m, seats, events = _aa_dataset(np.random.default_rng(7), 400)
    first = M.paired_metric_tests(m, seats, events, "base")
    for seed in range(3):
        again = M.paired_metric_tests(m.sample(fraction=1.0, shuffle=True, seed=seed),
                                      seats.sample(fraction=1.0, shuffle=True, seed=seed),
                                      events.sample(fraction=1.0, shuffle=True, seed=seed),
                                      "base")
        assert_frame_equal(again, first, check_exact=True)


def test_aa_comparisons_stay_quiet():
    """A/A: 200 synthetic datasets of 200 pairs each with independent noise. At alpha=0.05
    the false-positive count must stay within the binomial tolerance: at most the 99.9%
    one-sided quantile of Binomial(200, 0.05), i.e. 21 of 200 (rate ≤ 0.105; the chance
    of exceeding it with a true rate of 0.05 is 0.0005). Checked for the family of all 8
    tests after Holm, for raw p of end_turn (paired t) and of victory=science (McNemar)."""
    reps, n, alpha = 200, 200, 0.05
    tail = [sum(math.comb(reps, i) * alpha**i * (1 - alpha) ** (reps - i)
                for i in range(k + 1, reps + 1)) for k in range(reps + 1)]
    limit = next(k for k in range(reps + 1) if tail[k] <= 0.001)
    assert limit == 21
    rng = np.random.default_rng(2024)
    family = end_raw = sci_raw = 0
    for _ in range(reps):
        m, s, e = _aa_dataset(rng, n)
        tests = pl.concat([M.paired_victory_tests(m, "base"),
                           M.paired_metric_tests(m, s, e, "base")],
                          how="diagonal")
        assert tests.height == 8
        out = M.significance(tests, "holm", alpha)
        family += bool(out.get_column("changed").any())
        end_raw += row(out, metric="end_turn")["p_value"] <= alpha
        sci_raw += row(out, metric="victory=science")["p_value"] <= alpha
    print(f"A/A false positives of {reps}: family {family}, end_turn {end_raw}, "
          f"science {sci_raw} (limit {limit})")
    assert family <= limit, family
    assert end_raw <= limit, end_raw
    assert sci_raw <= limit, sci_raw


def test_significance_corrects_across_all_rows():
    tests = pl.DataFrame({"variant": ["a", "a", "b", "b", "b"],
                          "metric": ["x", "y", "x", "y", "z"],
                          "p_value": [0.01, 0.04, 0.03, 0.005, None]})
    h = M.significance(tests)
    assert h.columns == ["variant", "metric", "p_value", "p_adjusted", "changed",
                         "resolution_limited"]
    assert not h.get_column("resolution_limited").any()  # no min_p_value: continuous tests
    assert h.get_column("p_adjusted").to_list()[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert h.get_column("p_adjusted")[4] is None
    assert h.get_column("changed").to_list() == [True, False, False, True, False]
    bh = M.significance(tests, method="bh")
    assert bh.get_column("p_adjusted").to_list()[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert bh.get_column("changed").to_list() == [True, True, True, True, False]
    assert M.significance(tests, alpha=0.01).get_column("changed").sum() == 0
    with pytest.raises(ValueError):
        M.significance(tests, method="bonferroni")


# ---------------------------------------------------------------- score (T13)

def _seats_t13() -> pl.DataFrame:
    """Match 0: the winner, a standing seat, an eliminated seat that kept 5 gold points
    (its whole score is gold) and a standing seat; match 1: the winner and an eliminated
    seat with nothing."""
    rows = []
    # (match, winner, alive, region, population, cities, gold, monuments)
    for i, (match, w, alive, region, pop, cities, gold, mon) in enumerate([
            (0, True, True, 40, 30, 20, 10, 0), (0, False, True, 20, 20, 0, 10, 0),
            (0, False, False, 0, 0, 0, 5, 0), (0, False, True, 100, 40, 40, 20, 0),
            (1, True, True, 30, 30, 20, 0, 20), (1, False, False, 0, 0, 0, 0, 0)]):
        score = region + pop + cities + gold + mon
        rows.append({"match_id": f"a:{match}", "match_index": match, "seat": i % 4,
                     "winner": w, "alive": alive, "score": score, "region_points": region,
                     "population_points": pop, "cities_points": cities, "gold_points": gold,
                     "monuments_points": mon, "personality": "p",
                     "eliminated_turn": None if alive else 30})
    return frame("seats", rows, "a")


def test_t13_gold_share_of_score():
    out = M.gold_share(_seats_t13())
    assert out.columns == ["variant", "group", "mean", "lo", "hi", "n", "matches"]
    assert out.get_column("group").to_list() == ["winners", "standing"]
    # standing seats: 10/100, 10/50, 20/200 in match 0 and 0/100 in match 1; the eliminated
    # seat's 5/5 = 100 % is left out. Mean 0.4/4 = 0.1
    a = row(out, group="standing")
    assert (a["n"], a["matches"]) == (4, 2) and a["mean"] == pytest.approx(0.1)
    # winners: 0.1 and 0.0, one per match
    w = row(out, group="winners")
    assert (w["n"], w["matches"], w["mean"]) == (2, 2, pytest.approx(0.05))
    # clustered by match: residuals 0, 0.1, 0 | -0.1 sum to 0.1 and -0.1 per match; variance
    # of the mean (0.1² + 0.1²)/4² · G/(G-1) = 0.0025, se 0.05; t(0.975, 1 df) = 12.7062:
    # 0.1 ± 0.63531, lo clipped at 0
    assert a["lo"] == 0.0 and a["hi"] == pytest.approx(0.73531, abs=1e-5)


def test_t13_gold_share_over_turns():
    turns = frame("turns", [
        {"match_id": "a:0", "match_index": 0, "turn": 1, "seat": 0, "gold": 1, "score": 10},
        {"match_id": "a:0", "match_index": 0, "turn": 1, "seat": 1, "gold": 3, "score": 10},
        {"match_id": "a:0", "match_index": 0, "turn": 1, "seat": 2, "gold": 0, "score": 0},
        {"match_id": "a:0", "match_index": 0, "turn": 2, "seat": 0, "gold": 5, "score": 20},
    ], "a")
    seats = frame("seats", [{"match_id": "a:0", "match_index": 0, "seat": s} for s in range(3)],
                  "a")
    out = M.gold_share_over_turns(turns, seats)
    assert out.columns == ["variant", "turn", "mean_share", "n"]
    assert out.rows() == [("a", 1, pytest.approx(0.2), 2), ("a", 2, 0.25, 1)]


def test_t13_score_decomposition():
    out = M.score_decomposition(_seats_t13())
    assert out.columns == ["variant", "group", "term", "mean_points", "share"]
    assert out.get_column("term").to_list()[:5] == list(M.TERMS)
    # standing seats (4): region (40+20+100+30)/4 = 47.5, population 30, cities 20,
    # gold 10, monuments 5; share = mean of term/score: region (0.4+0.4+0.5+0.3)/4 = 0.4
    got = {r["term"]: (r["mean_points"], r["share"]) for r in
           out.filter(pl.col("group") == "standing").iter_rows(named=True)}
    assert got["region"] == pytest.approx((47.5, 0.4))
    assert got["population"] == pytest.approx((30.0, (0.3 + 0.4 + 0.2 + 0.3) / 4))
    assert got["gold"] == pytest.approx((10.0, 0.1))
    assert got["monuments"] == pytest.approx((5.0, 0.05))
    assert sum(v[1] for v in got.values()) == pytest.approx(1.0)
    win = out.filter(pl.col("group") == "winners")
    assert win.get_column("mean_points").to_list() == [35.0, 30.0, 20.0, 5.0, 10.0]
    assert win.get_column("share").sum() == pytest.approx(1.0)


# ---------------------------------------------------------------- capital falls (V08–V11)

def _ev(match: int, event: int, turn: int, kind: str, seat=None, by=None, city=None,
        cause=None, value=None, detail=None, variant: str = "base") -> dict:
    return {"match_id": f"{variant}:{match}", "match_index": match, "event": event,
            "turn": turn, "kind": kind, "seat": seat, "by": by, "city": city, "cause": cause,
            "value": value, "detail": detail, "variant": variant}


def cascade_log() -> pl.DataFrame:
    """Match 0: seat 1 takes seat 0's capital (city 0) at turn 5; cities 2 and 4 transfer
    to seat 1 in revolt, city 3 is kept and becomes the capital. Seat 2 captures city 2
    while it still revolts (taken by a third seat); city 4's revolt ends before seat 2
    takes it. At turn 10 seat 2 takes city 3: a second fall, seat 0 eliminated (V10).
    Match 1: seat 3 loses its last city by plain capture (eliminated, no fall); seat 1's
    capital falls to seat 0 with one transfer that a Divan kept out of revolt (V13),
    which seat 2 then captures (not in revolt, so not counted).
    Variant "alt" has no fall at all."""
    return pl.DataFrame([
        _ev(0, 0, 5, "capture", 0, 1, 0, value=7),
        _ev(0, 1, 5, "capital_fall", 0, 1, 0, value=3),
        _ev(0, 2, 5, "transfer", 0, 1, 2, cause=1),
        _ev(0, 3, 5, "revolt_start", 1, 0, 2, value=3, detail="transfer"),
        _ev(0, 4, 5, "transfer", 0, 1, 4, cause=1),
        _ev(0, 5, 5, "revolt_start", 1, 0, 4, value=3, detail="transfer"),
        _ev(0, 6, 5, "kept", 0, 1, 3, cause=1),
        _ev(0, 7, 6, "capture", 1, 2, 2, value=9),
        _ev(0, 8, 8, "revolt_end", 1, None, 4, detail="transfer"),
        _ev(0, 9, 9, "capture", 1, 2, 4, value=9),
        _ev(0, 10, 10, "capture", 0, 2, 3, value=9),
        _ev(0, 11, 10, "capital_fall", 0, 2, 3),
        _ev(0, 12, 10, "eliminated", 0, 2, cause=11),
        _ev(1, 0, 3, "capture", 3, 0, 7, value=1),
        _ev(1, 1, 3, "eliminated", 3, 0, cause=0),
        _ev(1, 2, 4, "capture", 1, 0, 1, value=1),
        _ev(1, 3, 4, "capital_fall", 1, 0, 1, value=5),
        _ev(1, 4, 4, "transfer", 1, 0, 6, cause=3),
        _ev(1, 5, 4, "kept", 1, 0, 5, cause=3),
        _ev(1, 6, 5, "capture", 0, 2, 6, value=4),
        _ev(1, 7, 6, "observatory_lost", 0, 2, 8),
        _ev(0, 0, 2, "found", 0, None, 1, variant="alt"),
    ], schema=EV_SCHEMA, orient="row")


def test_v08_capital_falls_per_match():
    m = pl.concat([matches_of("base", ["conquest"] * 3), matches_of("alt", ["science"])])
    out = M.capital_falls_per_match(cascade_log(), m)
    assert out.columns == ["variant", "matches", "falls", "mean", "lo", "hi",
                           "matches_with_fall"]
    # base: falls per match 2, 1, 0 → mean 1, sd 1, half 1.959964/√3 = 1.131586
    b = row(out, variant="base")
    assert (b["matches"], b["falls"], b["mean"], b["matches_with_fall"]) == (3, 3, 1.0, 2)
    assert b["lo"] == 0.0 and b["hi"] == pytest.approx(2.131586, abs=1e-6)
    a = row(out, variant="alt")
    assert (a["matches"], a["falls"], a["mean"], a["lo"], a["hi"]) == (1, 0, 0.0, None, None)


def test_v08_v10_cascade_depth():
    out = M.cascade_depth(cascade_log())
    assert out.columns == ["variant", "depth", "seats"]
    # seat 0 of match 0 lost two capitals (the second is city 3, the capital the first fall
    # named, 5 turns later), seat 1 of match 1 one; without a seats table the seats of the
    # log count: match 0 seats 1 and 2, match 1 seats 0, 2 and 3 lost none, as did alt's seat 0
    assert out.rows() == [("alt", 0, 1), ("base", 0, 5), ("base", 1, 1), ("base", 2, 1)]


def test_v08_transfers_per_fall():
    out = M.transfers_per_fall(cascade_log())
    assert out.columns == ["variant", "falls", "mean_transferred", "mean_kept"]
    # falls: (2 transferred, 1 kept), (0, 0), (1, 1)
    assert out.rows() == [("alt", 0, None, None), ("base", 3, 1.0, pytest.approx(2 / 3))]


def test_v10_eliminations_by_fall():
    out = M.eliminations_by_fall(cascade_log())
    assert out.columns == ["variant", "eliminations", "by_capital_fall", "share"]
    assert out.rows() == [("alt", 0, 0, None), ("base", 2, 1, 0.5)]


def test_v08_fall_to_elimination():
    out = M.fall_to_elimination(cascade_log())
    assert out.columns == ["variant", "n", "mean_turns", "median_turns"]
    # seat 0 of match 0: first fall turn 5, eliminated turn 10; seat 3 never lost a capital
    assert out.rows() == [("alt", 0, None, None), ("base", 1, 5.0, 5.0)]


def test_v11_revolting_city_taken_by_third_seat():
    out = M.revolting_taken_by_third(cascade_log())
    assert out.columns == ["variant", "transfers", "taken_by_third", "retaken_by_former_owner",
                           "share", "retaken_share"]
    # transfers: city 2 (taken while revolting), city 4 (taken after revolt_end),
    # city 6 of match 1 (no revolt)
    assert out.rows() == [("alt", 0, 0, 0, None, None),
                          ("base", 3, 1, 0, pytest.approx(1 / 3), 0.0)]


def test_v08_v11_retransfer_during_revolt_counts_as_taken():
    """A revolting city handed on again when its new owner's capital falls (V08 again)."""
    log = pl.DataFrame([
        _ev(0, 0, 5, "capital_fall", 0, 1, 0, value=3),
        _ev(0, 1, 5, "transfer", 0, 1, 2, cause=0),
        _ev(0, 2, 5, "revolt_start", 1, 0, 2, value=3, detail="transfer"),
        _ev(0, 3, 6, "capital_fall", 1, 2, 9, value=None),
        _ev(0, 4, 6, "transfer", 1, 2, 2, cause=3),
        _ev(0, 5, 6, "revolt_start", 2, 1, 2, value=3, detail="transfer"),
        _ev(0, 6, 9, "revolt_end", 2, None, 2, detail="transfer"),
    ], schema=EV_SCHEMA, orient="row")
    assert M.revolting_taken_by_third(log).rows() == [("base", 2, 1, 0, 0.5, 0.0)]


# ---------------------------------------------------------------- match length, seats

def test_end_turn_distribution():
    m = pl.concat([matches_of("a", ["science"] * 5 + ["conquest"], [10, 20, 30, 40, 50, 7])])
    out = M.end_turn_distribution(m)
    assert out.columns == ["variant", "victory", "n", "mean", "p10", "p25", "median", "p75",
                           "p90"]
    # linear quantiles of 10..50: position q·4 → p10 = 14, p25 = 20, p75 = 40, p90 = 46
    assert out.rows() == [("a", "conquest", 1, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0),
                          ("a", "science", 5, 30.0, 14.0, 20.0, 30.0, 40.0, 46.0)]


def test_win_rate_by_seat_and_personality():
    rows = []
    for i in range(10):
        for s, pers in enumerate(["scholar", "conqueror"]):
            rows.append({"match_id": f"a:{i}", "match_index": i, "seat": s,
                         "personality": pers, "winner": (s == 0) == (i < 8)})
    seats = frame("seats", rows, "a")
    by_seat = M.win_rate_by_seat(seats)
    assert by_seat.columns == ["variant", "seat", "wins", "matches", "rate", "lo", "hi"]
    assert by_seat.select("seat", "wins", "matches", "rate").rows() == [(0, 8, 10, 0.8),
                                                                        (1, 2, 10, 0.2)]
    assert (by_seat["lo"][0], by_seat["hi"][0]) == pytest.approx((0.4902, 0.9433), abs=5e-5)
    by_pers = M.win_rate_by_personality(seats)
    assert by_pers.columns == ["variant", "personality", "wins", "matches", "rate", "lo", "hi"]
    assert by_pers.select("personality", "wins").rows() == [("conqueror", 2), ("scholar", 8)]


# ---------------------------------------------------------------- near misses (V16–V18)

def _turns(match: int, seat: int, counters: list[int]) -> list[dict]:
    return [{"match_id": f"base:{match}", "match_index": match, "turn": t + 1, "seat": seat,
             "dominance": c} for t, c in enumerate(counters)]


def test_v18_v17_near_misses():
    """V18: runs of the dominance counter that reached 6 or 7 and fell back to 0; V17:
    Observatories lost with their city."""
    rows = (_turns(0, 0, [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 0])   # one near miss
            + _turns(0, 1, [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 1])  # one (peak 7)
            + _turns(0, 2, [1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0])  # peak 5: none
            + _turns(1, 0, [1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 0])  # two runs
            + _turns(1, 1, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6]))  # still going: none
    turns = frame("turns", rows, "base")
    m = matches_of("base", ["science"] * 3)
    out = M.near_misses(turns, m, cascade_log())
    assert out.columns == ["variant", "matches", "dominance_near_misses", "observatories_lost",
                           "matches_with_near_miss"]
    # near misses: match 0 two, match 1 two; one observatory lost in match 1; match 2 none
    assert out.rows() == [("base", 3, 4, 1, 2)]
    # with counter_to_win = 7 only peaks 5 and 6 count: match 0 seats 0 and 2, match 1 seat 0
    # once (its first run peaks at 7, i.e. it would have won)
    assert M.near_misses(turns, m, cascade_log(), counter_to_win=7).rows() == [
        ("base", 3, 3, 1, 2)]


def test_v18_near_misses_use_each_variant_s_own_counter_to_win():
    """A variant whose tables win at 7 counts peaks 5 and 6; the others keep 8 (the
    default, or their own value read from provenance)."""
    counters = [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 0]  # runs peaking at 6, then 5
    turns = pl.concat([frame("turns", [{**r, "match_id": f"{v}:0"}
                                       for r in _turns(0, 0, counters)], v)
                       for v in ("a", "b")])
    m = pl.concat([matches_of(v, ["science"]) for v in ("a", "b")])
    prov = {"variants": [
        {"id": "a", "overrides": {}, "tables": {"dominance": {"counter_to_win": 8}}},
        {"id": "b", "overrides": {"dominance.counter_to_win": 7},
         "tables": {"dominance": {"counter_to_win": 7}}}]}
    assert M.counters_to_win(prov) == {"a": 8, "b": 7}
    out = M.near_misses(turns, m, cascade_log(), counter_to_win=M.counters_to_win(prov))
    assert out.select("variant", "dominance_near_misses").rows() == [("a", 1), ("b", 2)]
    assert M.near_misses(turns, m, cascade_log(), counter_to_win={"b": 7}).rows() == \
        out.rows()


# ---------------------------------------------------------------- loading

def _write(root: Path, table: str, variant: str, rows: list[dict]) -> None:
    path = root / table / f"variant={variant}" / "part-00000.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    frame(table, rows).drop("variant").write_parquet(path)


def test_load_run_reads_tables_and_provenance(tmp_path):
    for v in ("1", "base"):
        _write(tmp_path, "matches", v, [
            {"match_id": f"{v}:{i}", "match_index": i, "victory": "science", "end_turn": 40}
            for i in (1, 0)])
    _write(tmp_path, "errors", "base", [])
    (tmp_path / "provenance.json").write_text(json.dumps(
        {"baseline": "base", "variants": [{"id": "base"}, {"id": "1"}]}))
    run = load_run(tmp_path)
    assert run.baseline == "base" and run.variants == ["base", "1"]
    assert run.matches.get_column("variant").dtype == pl.Utf8
    assert run.matches.select("variant", "match_index").rows() == [
        ("1", 0), ("1", 1), ("base", 0), ("base", 1)]
    assert run.matches.columns == [*SCHEMAS["matches"], "variant"]
    for table in ("seats", "events", "turns", "errors"):
        df = getattr(run, table)
        assert df.height == 0
        assert df.schema == pl.Schema({**SCHEMAS[table], "variant": pl.Utf8})
    # no provenance: the first variant found
    (tmp_path / "provenance.json").unlink()
    assert load_run(tmp_path).baseline == "1"
    with pytest.raises(RunFolderError, match="nothing: no such run folder"):
        load_run(tmp_path / "nothing")


def test_preload_imports_the_libraries_then_the_callers_modules_in_one_thread():
    """The report's preload thread imports the statistics libraries and after them the
    modules it names (altair, for the charts at the end); a module that cannot be
    imported is left for its user to report, with no traceback from the thread."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from sim.analysis import stats\n"
            "assert 'colorsys' not in sys.modules\n"
            "stats.preload(then=('colorsys', 'no_such_module_here')).join()\n"
            "print('colorsys' in sys.modules, stats._LIBS is not None)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"] and done.stderr == ""
