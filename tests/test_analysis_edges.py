"""sim.analysis at the edges (issue 12, items 9–14): gold-share definitions that leave
eliminated seats out, intervals clustered by match, p-values whose resolution does
not floor, failed matches and consistent pairing, cascades that follow the event
log, paired intervals and a joint test of the victory mix.

Hand-built frames carry their arithmetic in comments; the coverage test draws
synthetic clustered data with a known mean. Rule IDs: T13 score terms (gold term),
V02 elimination, V08–V11 capital falls and revolts, V01 victory types.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from sim.analysis import metrics as M
from sim.analysis.load import RunFolderError, load_run
from sim.analysis.stats import (
    clustered_difference,
    clustered_mean,
    mcnemar_exact,
    mean_interval,
    paired_share_interval,
    stuart_maxwell,
)
from tests.test_analysis import EV_SCHEMA, frame, row


def matches_of(variant: str, victories: list, winners: list[int] | None = None,
               indices: list[int] | None = None) -> pl.DataFrame:
    idx = indices if indices is not None else list(range(len(victories)))
    won = winners if winners is not None else [0] * len(victories)
    return frame("matches", [{"match_id": f"{variant}:{i}", "match_index": i, "victory": v,
                              "end_turn": 50, "winner": w}
                             for i, v, w in zip(idx, victories, won, strict=True)], variant)




# ---------------------------------------------------------------- 9: gold share (T13, V02)

def _seat(variant: str, match: int, seat: int, winner: bool, alive: bool, score: int,
          gold: int, eliminated: int | None = None) -> dict:
    rest = score - gold  # the other terms, all counted as region points here
    return {"match_id": f"{variant}:{match}", "match_index": match, "seat": seat,
            "winner": winner, "alive": alive, "score": score, "gold_points": gold,
            "region_points": rest, "population_points": 0, "cities_points": 0,
            "monuments_points": 0, "eliminated_turn": eliminated, "variant": variant}


def _gold_run() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two matches of variant "a" (and the same two of "b", every gold term +10).
    Match 0: winner 10/100, standing 20/80, eliminated at turn 40 with 6 gold points
    and nothing else (6/6 = 100 %), eliminated with nothing (0/0: no share).
    Match 1: winner 30/100, standing 0/50."""
    rows = []
    for variant, extra in (("a", 0), ("b", 10)):
        rows += [_seat(variant, 0, 0, True, True, 100 + extra, 10 + extra),
                 _seat(variant, 0, 1, False, True, 80 + extra, 20 + extra),
                 _seat(variant, 0, 2, False, False, 6 + extra, 6 + extra, 40),
                 _seat(variant, 0, 3, False, False, 0, 0, 20),
                 _seat(variant, 1, 0, True, True, 100 + extra, 30 + extra),
                 _seat(variant, 1, 1, False, True, 50 + extra, extra)]
    seats = frame("seats", rows)
    matches = pl.concat([matches_of(v, ["conquest", "turn_limit"]) for v in ("a", "b")])
    return matches, seats


def test_t13_gold_share_leaves_eliminated_seats_out():
    """The old "all seats" share averaged 10/100, 20/80, 6/6, 30/100, 0/50 = 33 %, the
    eliminated seat's 100 % included; standing seats are 10 %, 25 %, 30 %, 0 %: 16.25 %."""
    _, seats = _gold_run()
    out = M.gold_share(seats.filter(pl.col("variant") == "a"))
    standing = row(out, group="standing")
    assert standing["mean"] == pytest.approx((0.1 + 0.25 + 0.3 + 0.0) / 4)
    assert (standing["n"], standing["matches"]) == (4, 2)
    winners = row(out, group="winners")
    assert winners["mean"] == pytest.approx((0.1 + 0.3) / 2) and winners["n"] == 2
    assert set(out.get_column("group")) == {"winners", "standing"}


def test_t13_gold_share_over_turns_counts_seats_while_standing():
    """Seat 1 is eliminated at turn 3 and keeps 4 gold points: its rows from turn 3 on
    (score = gold, share 100 %) are not those of a standing seat."""
    rows = []
    for turn, (g0, s0), (g1, s1) in [(1, (1, 10), (2, 10)), (2, (2, 20), (4, 8)),
                                     (3, (3, 30), (4, 4)), (4, (4, 40), (4, 4))]:
        rows += [{"match_id": "a:0", "match_index": 0, "turn": turn, "seat": 0, "gold": g0,
                  "score": s0, "region": s0 - g0, "population": 0, "cities": 0,
                  "monuments": 0},
                 {"match_id": "a:0", "match_index": 0, "turn": turn, "seat": 1, "gold": g1,
                  "score": s1, "region": s1 - g1, "population": 0, "cities": 0,
                  "monuments": 0}]
    turns = frame("turns", rows, "a")
    seats = frame("seats", [_seat("a", 0, 0, True, True, 40, 4),
                            _seat("a", 0, 1, False, False, 4, 4, eliminated=3)])
    expected = [("a", 1, pytest.approx(0.15), 2), ("a", 2, pytest.approx(0.3), 2),
                ("a", 3, pytest.approx(0.1), 1), ("a", 4, pytest.approx(0.1), 1)]
    assert M.gold_share_over_turns(turns, seats).rows() == expected
    # without the seats table: standing = holding anything but gold; the same rows here
    assert M.gold_share_over_turns(turns).rows() == expected


def test_t13_one_gold_share_definition_everywhere():
    """gold_share, score_decomposition's gold row and the paired tests' baseline and
    variant values are the same numbers."""
    matches, seats = _gold_run()
    share = M.gold_share(seats)
    decomposition = M.score_decomposition(seats).filter(pl.col("term") == "gold")
    tests = M.paired_metric_tests(matches, seats, frame("events", []), "a")
    for group, metric in (("winners", "winner_gold_share"), ("standing", "standing_gold_share")):
        a, b = row(share, variant="a", group=group), row(share, variant="b", group=group)
        assert row(decomposition, variant="a", group=group)["share"] == pytest.approx(a["mean"])
        test = row(tests, variant="b", metric=metric)
        assert test["baseline_value"] == pytest.approx(a["mean"])
        assert test["variant_value"] == pytest.approx(b["mean"])
        assert test["difference"] == pytest.approx(b["mean"] - a["mean"])
        assert test["n_pairs"] == 2


# ---------------------------------------------------------------- 10: clustered intervals

def _clustered_seats(rng: np.random.Generator, matches: int, mean: float) -> pl.DataFrame:
    """4 standing seats per match whose gold shares share a match effect: share =
    mean + u_match + e_seat, sd(u) = 0.08, sd(e) = 0.03 (intra-match correlation 0.88);
    score 10 000 so the integer gold term rounds the share by at most 5e-5."""
    share = (mean + np.repeat(rng.normal(0, 0.08, matches), 4)
             + rng.normal(0, 0.03, 4 * matches))
    gold = np.rint(np.clip(share, 0, 1) * 10_000).astype(np.int64)
    return pl.DataFrame({
        "variant": "a", "match_index": np.repeat(np.arange(matches), 4),
        "seat": np.tile(np.arange(4), matches), "winner": np.tile([True, False, False, False],
                                                                 matches),
        "alive": True, "score": 10_000, "gold_points": gold})


def test_seat_intervals_are_clustered_by_match_and_cover():
    """Nominal 95 % intervals of the standing seats' gold share over 600 synthetic runs of
    40 matches × 4 correlated seats. The clustered interval (gold_share) must cover the
    true mean 0.3 in 95 % ± 2.7 % of runs (3 binomial sd of 600 draws: 0.0089 each); the
    naive interval that treats the 160 seat rows as independent (the old gold_share)
    must under-cover in the same runs: its design effect is 1 + 3·0.88 = 3.6, so it
    covers about P(|Z| < 1.96/1.9) = 70 %."""
    rng = np.random.default_rng(12)
    truth, runs = 0.3, 600
    clustered = naive = 0
    for _ in range(runs):
        seats = _clustered_seats(rng, 40, truth)
        out = row(M.gold_share(seats), group="standing")
        clustered += out["lo"] <= truth <= out["hi"]
        _, lo, hi, _ = mean_interval((seats["gold_points"] / seats["score"]).to_numpy())
        naive += lo <= truth <= hi
    print(f"coverage of {runs}: clustered {clustered / runs:.3f}, naive {naive / runs:.3f}")
    assert abs(clustered / runs - 0.95) <= 0.027, clustered / runs
    assert naive / runs < 0.85, naive / runs


def test_clustered_mean_known_answer_and_edges():
    # clusters {1, 2, 3} and {5}: mean 2.75; residuals -1.75, -0.75, 0.25 | 2.25 sum to
    # -2.25 and 2.25; variance (2·2.25²)/4² · 2/1 = 1.265625, se 1.125; t(0.975, 1) 12.7062
    mean, lo, hi, n, g = clustered_mean([1.0, 2.0, 3.0, 5.0], [7, 7, 7, 9])
    assert (mean, n, g) == (2.75, 4, 2)
    assert (lo, hi) == pytest.approx((2.75 - 14.294482, 2.75 + 14.294482), abs=1e-5)
    mean, lo, hi, _, _ = clustered_mean([0.4, 0.4, 0.4], [1, 2, 3])  # no spread
    assert mean == pytest.approx(0.4) and lo == hi == mean
    assert math.isnan(clustered_mean([1.0, 2.0], [1, 1])[1])  # one cluster: no interval
    assert clustered_mean([], [])[3:] == (0, 0)


def test_clustered_difference_is_the_paired_t_test_with_one_value_per_match():
    rng = np.random.default_rng(4)
    base = rng.normal(50, 10, 30)
    var = base + rng.normal(1.0, 3.0, 30)
    diff, lo, hi, p, g = clustered_difference(np.r_[base, var], np.r_[np.zeros(30), np.ones(30)],
                                              np.r_[np.arange(30), np.arange(30)])
    ref = sps.ttest_rel(var, base)
    ci = ref.confidence_interval(0.95)
    assert g == 30 and diff == pytest.approx(float(np.mean(var - base)))
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    assert (lo, hi) == pytest.approx((ci.low, ci.high), rel=1e-9)
    # identical arms: p = 1, a zero-width interval at 0; a constant shift: p = 0
    assert clustered_difference(np.r_[base, base], np.r_[np.zeros(30), np.ones(30)],
                                np.r_[np.arange(30), np.arange(30)])[:4] == (0.0, 0.0, 0.0, 1.0)
    assert clustered_difference(np.r_[base, base + 2], np.r_[np.zeros(30), np.ones(30)],
                                np.r_[np.arange(30), np.arange(30)])[3] == 0.0


# ---------------------------------------------------------------- 11: p-value resolution

def test_a_large_effect_is_flagged_in_a_family_of_hundreds():
    """40 variants × 6 tests (4 victory types, end_turn, capital_falls) = 240 tests. The
    old sign-flip p-value floored at 1/(2000 + 1), so Holm's smallest adjusted p was
    240/2001 = 0.12 and no continuous metric could ever be flagged; the t-test's p-value
    has no floor."""
    rng = np.random.default_rng(11)
    n, cats = 150, np.array(["conquest", "science", "dominance", "turn_limit"])
    parts = []
    for k in range(41):
        name = "base" if k == 0 else f"v{k:02d}"
        ends = rng.integers(40, 90, size=n) + (25 if name == "v07" else 0)
        parts.append(pl.DataFrame({"variant": name, "match_index": np.arange(n),
                                   "match_id": [f"{name}:{i}" for i in range(n)],
                                   "victory": cats[rng.integers(0, 4, size=n)],
                                   "winner": rng.integers(0, 4, size=n), "end_turn": ends}))
    m = pl.concat(parts)
    tests = pl.concat([M.paired_victory_tests(m, "base"),
                       M.paired_metric_tests(m, frame("seats", []), frame("events", []),
                                             "base")], how="diagonal")
    assert tests.height == 40 * 6 and 40 * 6 / 2001 > 0.05
    out = M.significance(tests, "holm")
    big = row(out, variant="v07", metric="end_turn")
    assert big["changed"] and big["p_adjusted"] < 1e-6
    assert out.get_column("changed").sum() == 1
    assert not out.get_column("resolution_limited").any()


def test_exact_tests_that_cannot_reach_significance_warn():
    """McNemar with 3 discordant pairs can give at best p = 2/8 = 0.25: in any family it
    can only be flagged if the rest is; with 6 or more discordant pairs (p >= 1/32)
    it is limited once the family has 2 or more tests."""
    tests = pl.DataFrame({"variant": ["a", "a", "b"], "metric": ["x", "y", "z"],
                          "p_value": [0.25, 1e-9, 0.01],
                          "min_p_value": [mcnemar_exact(3, 0), 0.0, mcnemar_exact(6, 0)]})
    with pytest.warns(M.ResolutionWarning, match="2 of 3 tests"):
        out = M.significance(tests)
    assert out.get_column("resolution_limited").to_list() == [True, False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = M.significance(tests.filter(pl.col("metric") == "z"))
    assert quiet.get_column("resolution_limited").to_list() == [False]


# ---------------------------------------------------------------- 12: errors and pairing

def _errors(variant: str, indices: list[int]) -> pl.DataFrame:
    return frame("errors", [{"match_id": f"{variant}:{i}", "match_index": i,
                             "message": f"boom {i}"} for i in indices], variant)


def test_error_rates_per_variant():
    m = pl.concat([matches_of("a", ["science"] * 8),
                   matches_of("b", ["science", "conquest"], indices=[0, 1])])
    # a: 8 finished, 2 failed; b: match 1 failed once then finished on a retry;
    # dead: every match failed
    errors = pl.concat([_errors("a", [9, 8]), _errors("b", [1]), _errors("dead", [0, 1, 2])])
    out = M.error_rates(m, errors)
    assert out.columns == ["variant", "played", "finished", "failed", "error_rate", "lo", "hi",
                           "first_error"]
    assert out.select("variant", "played", "finished", "failed", "error_rate").rows() == [
        ("a", 10, 8, 2, 0.2), ("b", 2, 2, 0, 0.0), ("dead", 3, 0, 3, 1.0)]
    assert row(out, variant="a")["first_error"] == "boom 8"
    assert row(out, variant="dead")["hi"] == 1.0


def test_a_variant_whose_matches_all_failed_has_clear_rows():
    m = matches_of("a", ["science", "conquest"])
    out = M.victory_frequencies(m, errors=_errors("dead", [0, 1]))
    dead = out.filter(pl.col("variant") == "dead")
    assert dead.height == 4 and dead.get_column("matches").to_list() == [0] * 4
    for col in ("share", "lo", "hi", "lo_simultaneous", "hi_simultaneous"):
        assert dead.get_column(col).null_count() == 4, col  # null, never NaN
    # and a variant with rows but no victory recorded in any is no different
    blank = M.victory_frequencies(matches_of("x", [None, None]))
    assert blank.get_column("share").null_count() == blank.height


def test_pairs_are_used_only_when_both_matches_finished():
    """Match 2 of the variant failed (errors row, no matches row), match 3 of the
    baseline has no victory: 3 of the 5 match indices pair, n_pairs says 3, and the
    McNemar counts add up to it."""
    base = matches_of("base", ["science", "science", "conquest", None, "science"])
    var = matches_of("v", ["conquest", "science", "conquest", "science"], indices=[0, 1, 3, 4])
    out = M.paired_victory_tests(pl.concat([base, var]), "base")
    sci = row(out, metric="victory=science")
    # pairs 0 (S→C), 1 (S→S), 4 (S→S)
    assert (sci["n_pairs"], sci["discordant_gain"], sci["discordant_loss"]) == (3, 0, 1)
    assert sci["baseline_value"] == 1.0 and sci["variant_value"] == pytest.approx(2 / 3)
    assert out.get_column("n_pairs").unique().to_list() == [3]
    mix = M.victory_mix_tests(pl.concat([base, var]), "base")
    assert mix.get_column("n_pairs").to_list() == [3]
    # continuous metrics pair the same way, and seats of a match missing from `matches`
    # (a part written without its match row) are ignored
    seats = frame("seats", [_seat(v, i, 0, True, True, 100, 10) for v in ("base", "v")
                            for i in range(5)])
    metric = M.paired_metric_tests(pl.concat([base, var]), seats, frame("events", []), "base")
    assert metric.get_column("n_pairs").unique().to_list() == [3]


def test_load_run_refuses_a_missing_or_empty_folder(tmp_path):
    with pytest.raises(RunFolderError) as missing:
        load_run(tmp_path / "nope")
    assert isinstance(missing.value, ValueError)
    assert str(missing.value) == f"{tmp_path / 'nope'}: no such run folder"
    for table in ("matches", "errors"):
        (tmp_path / table / "variant=a").mkdir(parents=True)
    with pytest.raises(RunFolderError, match="empty") as empty:
        load_run(tmp_path)
    assert str(tmp_path) in str(empty.value) and "\n" not in str(empty.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunFolderError, match="not a folder"):
        load_run(tmp_path / "file")


# ---------------------------------------------------------------- 13: cascades (V08–V11)

def _ev(match: int, event: int, turn: int, kind: str, seat=None, by=None, city=None,
        cause=None, value=None, detail=None, variant: str = "base") -> dict:
    return {"match_id": f"{variant}:{match}", "match_index": match, "event": event,
            "turn": turn, "kind": kind, "seat": seat, "by": by, "city": city, "cause": cause,
            "value": value, "detail": detail, "variant": variant}


def test_v08_v10_cascade_depth_follows_the_named_capital():
    """Match 0, seat 0: its capital 0 falls at turn 5 (new capital 3), 3 falls at turn 8
    (new capital 6), 6 falls at turn 12: one cascade of depth 3. Seat 1: capital 1 falls
    at turn 5 (new capital 4) and 4 falls at turn 55: two unrelated falls, depth 1
    (the old count said 2). Match 1, seat 2: capital 2 falls at turn 9 naming 8, then
    city 7 falls as a capital at turn 10 (the log links it to no earlier fall): depth 1.
    Seats 3 (match 0) and 0, 1 (match 1) lost nothing: depth 0."""
    log = pl.DataFrame([
        _ev(0, 0, 5, "capital_fall", 0, 2, 0, value=3),
        _ev(0, 1, 5, "kept", 0, 2, 3, cause=0),
        _ev(0, 2, 5, "capital_fall", 1, 2, 1, value=4),
        _ev(0, 3, 8, "capital_fall", 0, 2, 3, value=6),
        _ev(0, 4, 12, "capital_fall", 0, 1, 6),
        _ev(0, 5, 12, "eliminated", 0, 1, cause=4),
        _ev(0, 6, 55, "capital_fall", 1, 3, 4, value=5),
        _ev(1, 0, 9, "capital_fall", 2, 0, 2, value=8),
        _ev(1, 1, 10, "capital_fall", 2, 1, 7, value=8),
    ], schema=EV_SCHEMA, orient="row")
    seats = frame("seats", [{"match_id": f"base:{m}", "match_index": m, "seat": s,
                             "variant": "base"} for m in (0, 1) for s in range(4)])
    links = M.cascade_links(log)
    assert links.filter(pl.col("match_index") == 0).select("seat", "cascade", "step").rows() \
        == [(0, 1, 1), (0, 1, 2), (0, 1, 3), (1, 1, 1), (1, 2, 1)]
    out = M.cascade_depth(log, seats)
    # match 0: seat 0 depth 3, seat 1 depth 1, seats 2, 3 depth 0; match 1: seat 2 depth 1
    assert out.rows() == [("base", 0, 5), ("base", 1, 2), ("base", 2, 0), ("base", 3, 1)]
    # with a window of 60 turns seat 1's falls join up (its second fall is the capital
    # the first named)
    assert M.cascade_depth(log, seats, within=60).rows() == [
        ("base", 0, 5), ("base", 1, 1), ("base", 2, 1), ("base", 3, 1)]


def test_v11_retake_by_the_former_owner_is_its_own_category():
    """City 2 passes from seat 0 to seat 1 in revolt and seat 0 takes it back while it
    revolts; city 4 passes from 0 to 1 and seat 2 takes it: one of each."""
    log = pl.DataFrame([
        _ev(0, 0, 5, "capital_fall", 0, 1, 0, value=3),
        _ev(0, 1, 5, "transfer", 0, 1, 2, cause=0),
        _ev(0, 2, 5, "revolt_start", 1, 0, 2, value=3, detail="transfer"),
        _ev(0, 3, 5, "transfer", 0, 1, 4, cause=0),
        _ev(0, 4, 5, "revolt_start", 1, 0, 4, value=3, detail="transfer"),
        _ev(0, 5, 6, "capture", 1, 0, 2, value=5),
        _ev(0, 6, 7, "capture", 1, 2, 4, value=6),
    ], schema=EV_SCHEMA, orient="row")
    out = M.revolting_taken_by_third(log)
    assert out.rows() == [("base", 2, 1, 1, 0.5, 0.5)]


# ---------------------------------------------------------------- 14: victory differences

def test_paired_share_interval_known_answer_and_edges():
    # the Cavo et al. (2012) table of Fagerland, Lydersen & Laake's "Statistical Analysis of
    # Contingency Tables", ch. 8 (R contingencytables' test): [[59, 6], [16, 80]] gives
    # estimate -0.0621, Newcombe square-and-add 95 % CI -0.1186 to -0.0046
    diff, lo, hi = paired_share_interval(59, 6, 16, 80)
    assert (diff, lo, hi) == pytest.approx((-0.0621, -0.1186, -0.0046), abs=5e-5)
    # no discordant pair: an interval around 0 that is not a point (the Wald interval
    # degenerates to [0, 0] there)
    diff, lo, hi = paired_share_interval(50, 0, 0, 150)
    assert diff == 0.0 and -0.05 < lo < 0 < hi < 0.05
    # every discordant pair one way: the upper bound is not pinned to the estimate
    diff, lo, hi = paired_share_interval(40, 30, 0, 130)
    assert diff == pytest.approx(0.15) and 0 < lo < diff < hi
    assert all(math.isnan(v) for v in paired_share_interval(0, 0, 0, 0))
    with pytest.raises(ValueError):
        paired_share_interval(1, -1, 0, 0)


def test_paired_victory_tests_give_intervals():
    rng = np.random.default_rng(14)
    cats = np.array(["conquest", "science", "dominance", "turn_limit"])
    base = cats[rng.integers(0, 4, size=200)]
    var = np.where(rng.random(200) < 0.25, "science", base)
    out = M.paired_victory_tests(pl.concat([matches_of("base", base.tolist()),
                                            matches_of("v", var.tolist())]), "base")
    assert out.get_column("lo").null_count() == 0 and out.get_column("hi").null_count() == 0
    sci = row(out, metric="victory=science")
    assert 0 < sci["lo"] < sci["difference"] < sci["hi"]
    assert sci["p_value"] < 0.05
    # the report used to leave these empty: every victory row has its own interval now
    for r in out.iter_rows(named=True):
        assert r["lo"] <= r["difference"] <= r["hi"], r


def test_stuart_maxwell_known_answers():
    # the example of R's nonpar::stuart.maxwell, matrix(c(12,30,13,7,70,34,3,20,32),3,3)
    # (filled by column): statistic 23.5709322524609 on 2 df, p 7.61442467334117e-06
    table = np.array([12, 30, 13, 7, 70, 34, 3, 20, 32]).reshape(3, 3).T
    statistic, df, p = stuart_maxwell(table)
    assert (statistic, df) == (pytest.approx(23.5709322524609, rel=1e-12), 2)
    assert p == pytest.approx(7.61442467334117e-06, rel=1e-9)
    # 2 × 2: McNemar's chi-square (b − c)² / (b + c) = 49 / 13
    assert stuart_maxwell([[20, 3], [10, 30]])[:2] == (pytest.approx(49 / 13), 1)
    # a category nobody left or entered is left out, wherever it sits
    padded = np.zeros((4, 4), dtype=int)
    padded[np.ix_([0, 2, 3], [0, 2, 3])] = table
    padded[1, 1] = 9
    assert stuart_maxwell(padded) == pytest.approx((statistic, df, p))
    assert stuart_maxwell(np.diag([5, 0, 7])) == (0.0, 0, 1.0)


def test_victory_mix_tests_count_changed_winners():
    """Pairs by index: base S S C T D / variant S C C T S; winners 0 1 2 3 0 / 0 1 3 3 2."""
    base = matches_of("base", ["science", "science", "conquest", "turn_limit", "dominance"],
                      winners=[0, 1, 2, 3, 0])
    var = matches_of("v", ["science", "conquest", "conquest", "turn_limit", "science"],
                     winners=[0, 1, 3, 3, 2])
    same = matches_of("same", ["science", "science", "conquest", "turn_limit", "dominance"],
                      winners=[0, 1, 2, 3, 0])
    out = M.victory_mix_tests(pl.concat([base, var, same]), "base")
    assert out.columns == ["variant", "n_pairs", "victory_changed", "winner_changed",
                           "statistic", "df", "p_value"]
    v = row(out, variant="v")
    assert (v["n_pairs"], v["victory_changed"], v["winner_changed"]) == (5, 2, 2)
    # moved: science→conquest and dominance→science; the table without turn_limit (no
    # discordant pair) is the 3 × 3 of conquest, science, dominance
    table = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0]])
    assert (v["statistic"], v["df"], v["p_value"]) == pytest.approx(stuart_maxwell(table))
    s = row(out, variant="same")
    # nothing changed: no test to compute (a null p, left out of the Holm over variants)
    assert (s["victory_changed"], s["winner_changed"], s["p_value"]) == (0, 0, None)
