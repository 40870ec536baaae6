"""The game-quality metrics (sim.analysis.quality) and the mechanism explainer
(sim.analysis.mechanisms) on hand-built tiny frames: each metric's definition on
matches whose answer is worked out by hand, against a plain-Python reference on
random ones, and the paired tests and words built on them."""

from __future__ import annotations

import itertools

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.analysis import mechanisms, quality
from sim.outputs.schemas import SCHEMAS


def _turns(scores: dict[int, list[list[int]]], variant: str = "baseline",
           **columns: dict[int, list[list[int]]]) -> pl.DataFrame:
    """A turns table: scores[match][turn - 1][seat]; other columns (population,
    region, gold_stock, cities_held) the same shape, default 0 (cities_held 1)."""
    defaults = {"population": 0, "region": 0, "gold_stock": 0, "cities_held": 1}
    rows = []
    for match, per_turn in scores.items():
        for t, row in enumerate(per_turn, start=1):
            for seat, score in enumerate(row):
                rows.append({"variant": variant, "match_index": match, "turn": t, "seat": seat,
                             "score": score, **{
                                 name: columns[name][match][t - 1][seat] if name in columns
                                 else default for name, default in defaults.items()}})
    return pl.DataFrame(rows)


def _matches(ends: dict[int, tuple[int, int]], variant: str = "baseline") -> pl.DataFrame:
    """matches rows: ends[match] = (winner, end_turn)."""
    return pl.DataFrame([{"variant": variant, "match_id": f"{variant}:{m}", "match_index": m,
                          "winner": w, "victory": "turn_limit", "end_turn": e}
                         for m, (w, e) in ends.items()])


def _seats(eliminated: dict[int, list[int | None]], variant: str = "baseline") -> pl.DataFrame:
    return pl.DataFrame([{"variant": variant, "match_index": m, "seat": s, "eliminated_turn": t}
                         for m, turns in eliminated.items() for s, t in enumerate(turns)],
                        schema={"variant": pl.Utf8, "match_index": pl.Int64, "seat": pl.Int64,
                                "eliminated_turn": pl.Int64})


def _row(table: pl.DataFrame, match: int) -> dict:
    return table.filter(pl.col("match_index") == match).row(0, named=True)


def test_each_metric_on_matches_worked_out_by_hand():
    scores = {
        # seat 0 leads turns 1-2, seat 1 overtakes at turn 3 and wins at the limit
        0: [[5, 1], [5, 2], [3, 4], [3, 6]],
        # seat 0 leads from the first turn to the end
        1: [[1, 0], [2, 0], [3, 0], [4, 0]],
        # seat 1 never leads and wins (a science win from behind): decided by the ending
        2: [[3, 1], [3, 1], [3, 1]],
    }
    table = quality.quality_table(_turns(scores), _matches({0: (1, 4), 1: (0, 4), 2: (1, 3)}),
                                  _seats({0: [None, None], 1: [None, 3], 2: [None, None]}))
    assert table.columns == list(quality.QUALITY_SCHEMA)
    first = _row(table, 0)
    assert (first["lead_changes"], first["decisive_turn"], first["comeback"]) == (1, 3, True)
    assert first["decided_share"] == pytest.approx(3 / 4)
    # both seats move one place at turn 3: 2 places over 3 turns × 2 seats
    assert first["stability"] == pytest.approx(2 / 6)
    assert (first["largest_gap"], first["largest_gap_turn"]) == (4, 1)
    assert (first["eliminations"], first["first_elimination_turn"]) == (0, None)
    second = _row(table, 1)
    assert (second["lead_changes"], second["decisive_turn"], second["comeback"]) == (0, 1, False)
    assert second["stability"] == 0.0
    assert (second["largest_gap"], second["largest_gap_turn"]) == (4, 4)
    assert (second["eliminations"], second["first_elimination_turn"]) == (1, 3)
    third = _row(table, 2)
    assert (third["decisive_turn"], third["decided_share"], third["comeback"]) == (3, 1.0, True)


def test_ties_follow_T11_and_standing_seats_rank_first():
    """Equal scores: population decides, then region, gold stock, seat order (T11);
    an eliminated seat (no city, V02) ranks after every standing seat."""
    scores = {0: [[5, 5, 5, 9]]}
    population = {0: [[1, 2, 2, 0]]}
    region = {0: [[0, 0, 0, 0]]}
    gold = {0: [[0, 3, 4, 0]]}
    held = {0: [[1, 1, 1, 0]]}
    ranks = quality.standings(_turns(scores, population=population, region=region,
                                     gold_stock=gold, cities_held=held))
    assert ranks.get_column("rank").to_list() == [3, 2, 1, 4]
    assert ranks.get_column("standing").to_list() == [True, True, True, False]
    level = quality.standings(_turns({0: [[2, 2, 2]]}))
    assert level.get_column("rank").to_list() == [1, 2, 3]  # the last tiebreak: seat order


def _reference(scores: list[list[int]], held: list[list[int]], winner: int,
               end_turn: int) -> dict:
    """The turn metrics of one match, loop by loop (the module docstring's words)."""
    n = len(scores[0])
    ranks = []
    for row, alive in zip(scores, held, strict=True):
        order = sorted(range(n), key=lambda s: (-(alive[s] > 0), -row[s], s))
        ranks.append({s: order.index(s) + 1 for s in range(n)})
    leaders = [min(r, key=r.get) for r in ranks]
    changes = sum(a != b for a, b in itertools.pairwise(leaders))
    if leaders[-1] != winner:
        decisive = end_turn
    else:
        decisive = 1
        for t, leader in enumerate(leaders, start=1):
            if leader != winner:
                decisive = t + 1
    half = max(1, end_turn // 2)
    moved = sum(abs(a[s] - b[s]) for a, b in itertools.pairwise(ranks) for s in range(n))
    gaps = []
    for r, row, alive in zip(ranks, scores, held, strict=True):
        by_rank = {v: s for s, v in r.items()}
        second = by_rank.get(2)
        gaps.append(row[by_rank[1]] - row[second] if second is not None and alive[second] > 0
                    else None)
    seen = [g for g in gaps if g is not None]
    largest = max(seen) if seen else None
    return {"lead_changes": changes, "decisive_turn": decisive,
            "comeback": leaders[half - 1] != winner,
            "stability": moved / ((len(scores) - 1) * n) if len(scores) > 1 else None,
            "largest_gap": largest,
            "largest_gap_turn": gaps.index(largest) + 1 if largest is not None else None}


@st.composite
def _match(draw):
    seats = draw(st.integers(2, 5))
    turns = draw(st.integers(1, 8))
    scores = draw(st.lists(st.lists(st.integers(0, 6), min_size=seats, max_size=seats),
                           min_size=turns, max_size=turns))
    held = draw(st.lists(st.lists(st.integers(0, 1), min_size=seats, max_size=seats),
                         min_size=turns, max_size=turns))
    return scores, held, draw(st.integers(0, seats - 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(_match(), min_size=1, max_size=4))
def test_the_table_equals_a_loop_by_loop_reference(drawn):
    by_seats: dict[int, list] = {}
    for match in drawn:  # one variant per seat count: a turns table has one per match
        by_seats.setdefault(len(match[0][0]), []).append(match)
    for seats, matches in by_seats.items():
        variant = f"seats-{seats}"
        scores = {i: m[0] for i, m in enumerate(matches)}
        held = {i: m[1] for i, m in enumerate(matches)}
        ends = {i: (m[2], len(m[0])) for i, m in enumerate(matches)}
        table = quality.quality_table(_turns(scores, variant, cities_held=held),
                                      _matches(ends, variant), _seats({}, variant))
        for i, (score, alive, winner) in enumerate(matches):
            want = _reference(score, alive, winner, len(score))
            got = _row(table, i)
            for key, value in want.items():
                assert got[key] == (pytest.approx(value) if isinstance(value, float)
                                    else value), (key, score, alive, winner)


def _quality(variant: str, decisive: list[int], comeback: list[bool]) -> pl.DataFrame:
    n = len(decisive)
    return pl.DataFrame({
        "variant": [variant] * n, "match_id": [f"{variant}:{i}" for i in range(n)],
        "match_index": list(range(n)), "winner": [0] * n, "victory": ["science"] * n,
        "end_turn": [100] * n, "lead_changes": [3] * n, "decisive_turn": decisive,
        "decided_share": [d / 100 for d in decisive], "stability": [0.1] * n,
        "comeback": comeback, "eliminations": [1] * n, "first_elimination_turn": [None] * n,
        "largest_gap": [10] * n, "largest_gap_turn": [5] * n}, schema=quality.QUALITY_SCHEMA)


def test_means_intervals_paired_differences_and_words():
    base = [40 + (i * 7) % 11 for i in range(60)]
    table = pl.concat([
        _quality("baseline", base, [i % 5 == 0 for i in range(60)]),
        _quality("later", [d + 6 + (i % 3) for i, d in enumerate(base)],
                 [i % 5 == 0 or i % 7 == 1 for i in range(60)]),
        _quality("same", base, [i % 5 == 0 for i in range(60)])])
    summary = quality.quality_summary(table)
    comeback = summary.filter((pl.col("variant") == "baseline") & (pl.col("metric") == "comeback"))
    assert comeback.item(0, "mean") == pytest.approx(12 / 60)
    assert comeback.item(0, "lo") < 0.2 < comeback.item(0, "hi")
    # no first_elimination_turn anywhere: no row, rather than a mean of nothing
    assert "first_elimination_turn" not in summary.get_column("metric").to_list()
    tests = quality.quality_tests(table, "baseline")
    later = tests.filter(pl.col("variant") == "later").rows_by_key("metric", named=True,
                                                                   unique=True)
    assert later["decisive_turn"]["difference"] == pytest.approx(7.0, abs=0.1)
    assert later["decisive_turn"]["changed"] and later["decisive_turn"]["lo"] > 6
    assert later["comeback"]["difference"] == pytest.approx(
        sum(i % 7 == 1 and i % 5 != 0 for i in range(60)) / 60)
    assert not later["lead_changes"]["changed"]
    assert not tests.filter(pl.col("variant") == "same").get_column("changed").any()
    words = quality.change_words(tests, "later")
    assert words[0].startswith("decisive turn +7.0 turns [")
    sentence = quality.quality_sentences(summary, "baseline")
    mean = sum(base) / len(base)
    assert sentence.startswith(f"Matches are decided at turn {mean:.0f} of 100 on average "
                               f"({mean / 100:.0%} of the way through)")
    assert "20% are comebacks" in sentence and "the lead changes 3.0 times" in sentence
    hist = quality.distribution(table.filter(pl.col("variant") == "baseline"),
                                "decisive_turn", width=5)
    assert hist.get_column("matches").sum() == 60
    assert hist.get_column("share").sum() == pytest.approx(1.0)
    assert set(hist.get_column("bin").to_list()) <= {40, 45, 50}


def _events(rows: list[tuple], variant: str) -> pl.DataFrame:
    """events rows (match_index, kind, seat, by, city, value, detail)."""
    names = ("match_index", "kind", "seat", "by", "city", "value", "detail")
    frame = pl.DataFrame([dict(zip(names, r, strict=True)) for r in rows],
                         schema={n: SCHEMAS["events"][n] for n in names}, orient="row")
    return frame.with_columns(pl.lit(variant).alias("variant"))


def test_mechanism_counts_name_each_mechanism_and_fill_zeros(tmp_path):
    events = pl.concat([
        _events([(0, "truce", 1, 2, None, 30, None), (0, "truce", 2, 1, None, 30, None),
                 (0, "capture", 1, 0, 4, 7, None), (0, "capture", -2, 0, 5, 7, None),
                 (0, "attack", -3, 0, None, 5, "bandit"), (0, "attack", 0, -3, None, 5, "archer"),
                 (0, "attack", 0, 1, 3, 5, "archer"), (0, "built", 0, None, 1, None, "granary"),
                 (0, "research", 0, None, None, 40, "law"),
                 (0, "revolt_start", 1, 0, 3, 3, "transfer")], "baseline"),
        _events([(1, "built", 0, None, 1, None, "granary")], "baseline")])
    matches = _matches({0: (0, 50), 1: (1, 60)})
    # a truces table as the AI issue writes it: offers, accepted or not
    folder = tmp_path / "truces" / "variant=baseline"
    folder.mkdir(parents=True)
    pl.DataFrame({"match_index": [0, 0, 1], "accepted": [True, False, False]}).write_parquet(
        folder / "part-00000.parquet")
    counts = mechanisms.mechanism_counts(events, matches, ["baseline"], tmp_path)
    got = {(m, k): c for m, k, c in counts.select("match_index", "mechanism", "count").iter_rows()}
    assert got[(0, "truce")] == 2 and got[(0, "truce turns")] == 60
    assert got[(0, "city capture")] == 1 and got[(0, "village capture")] == 1
    assert got[(0, "bandit fight")] == 2 and got[(0, "city attack")] == 1
    assert got[(0, "granary built")] == 1 and got[(1, "granary built")] == 1
    assert got[(0, "law researched")] == 1 and got[(0, "revolt after a fall")] == 1
    assert (got[(0, "truce offers")], got[(0, "truce offers accepted")],
            got[(0, "truce offers declined")]) == (2, 1, 1)
    assert got[(1, "truce")] == 0  # every mechanism for every finished match
    assert counts.height == 2 * counts.get_column("mechanism").n_unique()


def test_mechanism_changes_rank_the_consistent_change_first_and_explain_in_words():
    n = 40
    rows = []
    for variant, granaries, markets in (("baseline", lambda i: 5 + i % 3, lambda i: 4 + i % 5),
                                        ("dear", lambda i: i % 2, lambda i: 4 + (i * 3) % 5)):
        for i in range(n):
            for _ in range(granaries(i)):
                rows.append((variant, i, "granary built"))
            for _ in range(markets(i)):
                rows.append((variant, i, "market built"))
    found = (pl.DataFrame(rows, schema=["variant", "match_index", "mechanism"], orient="row")
             .group_by("variant", "match_index", "mechanism")
             .agg(pl.len().cast(pl.Int64).alias("count")))
    # a row per match and mechanism, 0 where none, as mechanism_counts gives them
    counts = (pl.DataFrame({"variant": ["baseline", "dear"]})
              .join(pl.DataFrame({"match_index": list(range(n))}), how="cross")
              .join(pl.DataFrame({"mechanism": ["granary built", "market built"]}), how="cross")
              .join(found, on=["variant", "match_index", "mechanism"], how="left")
              .with_columns(pl.col("count").fill_null(0)))
    changes = mechanisms.mechanism_changes(counts, "baseline")
    top = changes.row(0, named=True)
    assert (top["rank"], top["mechanism"], top["changed"]) == (1, "granary built", True)
    assert top["difference"] == pytest.approx(0.5 - (5 + 39 / 40), abs=1e-9) and top["hi"] < 0
    assert top["relative"] == pytest.approx(top["difference"] / top["baseline_value"])
    market = changes.filter(pl.col("mechanism") == "market built").row(0, named=True)
    assert not market["changed"] and market["rank"] == 2
    victory = pl.DataFrame({"variant": ["dear"] * 3,
                            "metric": ["victory=science", "victory=conquest", "end_turn"],
                            "difference": [0.13, -0.02, 4.0], "changed": [True, False, True]})
    text = mechanisms.explanation(victory, changes, "dear")
    assert text.startswith("science +13.0 points: granary built −5.")
    assert "market" not in text  # only changed mechanisms are named
    assert "not causes" in mechanisms.CAVEAT
    mix = pl.DataFrame({"variant": ["dear", "other"], "changed": [True, False]})
    assert mechanisms.moved_variants(mix) == ["dear"]


def test_paired_t_is_the_clustered_difference_with_one_value_per_match_and_arm():
    import numpy as np

    from sim.analysis.stats import clustered_difference, paired_t

    rng = np.random.default_rng(45)
    base = rng.poisson(5, 80).astype(float)
    variant = base + rng.normal(0.4, 1.5, 80).round()
    diff, lo, hi, p, n = paired_t(variant - base)
    values = np.r_[base, variant]
    treated = np.r_[np.zeros(80), np.ones(80)]
    clusters = np.r_[np.arange(80), np.arange(80)]
    want = clustered_difference(values, treated, clusters)
    assert (diff, lo, hi, p) == pytest.approx(want[:4], rel=1e-9) and n == want[4] == 80
    assert paired_t(np.zeros(5)) == (0.0, 0.0, 0.0, 1.0, 5)
    assert paired_t(np.full(5, 2.0))[3] == 0.0
