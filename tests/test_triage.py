"""The report's headline and anomaly triage (issue 14), and the experiment file's
[gate] and [anomalies] sections: each flag on hand-made tables whose answer is
known, the headline's words, and the settings read back from a run's provenance."""

from __future__ import annotations

import polars as pl
import pytest

from sim.analysis.anomalies import (
    anomalies,
    anomaly_counts,
    blowouts,
    early_eliminations,
    end_turn_outliers,
    stalls,
    truce_cycling,
)
from sim.analysis.gate import gate
from sim.analysis.headline import effect_text, headline, override_words
from sim.analysis.load import empty_table
from sim.outputs.settings import AnomalySettings, report_settings
from sim.runner.experiments import ExperimentError, load_experiment
from tests.test_runs_support import experiment_text

pytestmark = pytest.mark.nojit


def _matches(rows: list[tuple]) -> pl.DataFrame:
    """rows: (variant, match_index, victory, end_turn, length)."""
    return pl.DataFrame(
        [(v, f"{v}:{i}", i, 0, w, e, n, f"sim match --seed 1 --match {i}")
         for v, i, w, e, n in rows],
        schema={"variant": pl.Utf8, "match_id": pl.Utf8, "match_index": pl.Int64,
                "winner": pl.Int64,
                "victory": pl.Utf8, "end_turn": pl.Int64, "length": pl.Int64,
                "replay": pl.Utf8}, orient="row")


def _turns(scores: dict[int, list[list[int]]]) -> pl.DataFrame:
    """scores[match][turn - 1] = each seat's score at that turn (variant "v")."""
    rows = [("v", f"v:{m}", m, t + 1, s, score)
            for m, per_turn in scores.items() for t, seats in enumerate(per_turn)
            for s, score in enumerate(seats)]
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                      "match_index": pl.Int64, "turn": pl.Int64,
                                      "seat": pl.Int64, "score": pl.Int64}, orient="row")


def _events(rows: list[tuple]) -> pl.DataFrame:
    """rows: (match_index, turn, kind, seat, by) of variant "v"."""
    return pl.DataFrame([("v", f"v:{m}", m, t, k, s, b) for m, t, k, s, b in rows],
                        schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                "match_index": pl.Int64, "turn": pl.Int64, "kind": pl.Utf8,
                                "seat": pl.Int64, "by": pl.Int64}, orient="row")


def test_a_stall_is_the_longest_quiet_run_and_a_capture_breaks_it():
    # match 0: scores move on turns 1-3, then 10 quiet turns; match 1: quiet turns
    # 4-13 too, but a capture on turn 8 splits them into runs of 4 and 5
    moving = [[1, 1], [2, 1], [3, 2]]
    quiet = [[3, 2]] * 10
    turns = _turns({0: moving + quiet, 1: moving + quiet})
    events = _events([(1, 8, "capture", 0, 1)])
    found = stalls(turns, events, stall_turns=6)
    assert found.get_column("match_index").to_list() == [0]
    assert found.row(0, named=True)["turn"] == 4
    assert found.row(0, named=True)["detail"] == "10 quiet turns from turn 4"
    assert stalls(turns, events, stall_turns=11).height == 0
    assert stalls(turns, events, stall_turns=5).get_column("match_index").to_list() == [0, 1]


def test_truce_cycling_counts_truces_of_the_same_pair_either_way():
    events = _events([(0, 5, "truce", 0, 1), (0, 40, "truce", 1, 0), (0, 75, "truce", 0, 1),
                      (1, 5, "truce", 0, 1), (1, 40, "truce", 0, 2), (1, 75, "truce", 2, 1)])
    found = truce_cycling(events, cycles=3)
    assert found.get_column("match_index").to_list() == [0]
    assert found.row(0, named=True)["detail"] == "seats 0 and 1 signed 3 truces"
    assert found.row(0, named=True)["turn"] == 75


def test_a_blowout_is_a_turn_limit_win_far_ahead_of_the_runner_up():
    matches = _matches([("v", 0, "turn_limit", 100, 100), ("v", 1, "turn_limit", 100, 100),
                        ("v", 2, "conquest", 50, 100)])
    seats = pl.DataFrame({"variant": ["v"] * 6, "match_id": ["v:0"] * 2 + ["v:1"] * 2 +
                          ["v:2"] * 2, "match_index": [0, 0, 1, 1, 2, 2],
                          "seat": [0, 1] * 3, "score": [300, 100, 300, 200, 900, 0]})
    found = blowouts(matches, seats, ratio=3.0)
    assert found.get_column("match_index").to_list() == [0]
    assert found.row(0, named=True)["detail"] == "turn-limit win 300 to 100"


def test_end_turn_outliers_use_the_fences_of_their_own_victory_type():
    rows = [("v", i, "conquest", 50 + i % 3, 100) for i in range(12)]
    rows += [("v", 12, "conquest", 95, 100)]                     # far out for a conquest
    rows += [("v", 13 + i, "turn_limit", 100, 100) for i in range(12)]  # all alike
    found = end_turn_outliers(_matches(rows), k=3.0)
    assert found.get_column("match_index").to_list() == [12]
    # a group of fewer than 8 has no fences
    assert end_turn_outliers(_matches([*rows[:5], ("v", 12, "conquest", 95, 100)]),
                             3.0).height == 0


def test_an_early_elimination_is_relative_to_the_match_length():
    matches = _matches([("v", 0, "conquest", 60, 60), ("v", 1, "conquest", 150, 150)])
    seats = pl.DataFrame({"variant": ["v"] * 4, "match_id": ["v:0", "v:0", "v:1", "v:1"],
                          "match_index": [0, 0, 1, 1], "seat": [0, 1, 0, 1],
                          "personality": ["a", "b", "a", "b"],
                          "eliminated_turn": [10, None, 10, 30]})
    # 12 % of 60 is 7.2, of 150 is 18: only match 1's turn-10 elimination is early
    found = early_eliminations(seats, matches, pct=12)
    assert found.get_column("match_index").to_list() == [1]
    assert found.row(0, named=True)["detail"] == "seat 0 (a) out on turn 10 of 150"
    assert early_eliminations(seats, matches, 12, before_turn=11).height == 2


def test_every_flag_carries_its_replay_and_the_counts_cover_every_flag():
    matches = _matches([("v", 0, "turn_limit", 100, 100), ("v", 1, "science", 80, 100)])
    seats = pl.DataFrame({"variant": ["v"] * 4, "match_id": ["v:0", "v:0", "v:1", "v:1"],
                          "match_index": [0, 0, 1, 1], "seat": [0, 1, 0, 1],
                          "personality": ["a", "b"] * 2, "score": [900, 100, 5, 5],
                          "eliminated_turn": [None, None, None, None]})
    errors = pl.DataFrame({"variant": ["v"], "match_id": ["v:2"], "match_index": [2],
                           "seed": [1], "message": ["ValueError: boom"],
                           "replay": ["sim match --seed 1 --match 2"]})
    flags = anomalies(matches, seats, empty_table("events"), empty_table("turns"), errors,
                      AnomalySettings())
    assert flags.select("match_index", "flag").rows() == [(2, "error"), (0, "blowout")]
    assert flags.get_column("replay").to_list() == ["sim match --seed 1 --match 2",
                                                    "sim match --seed 1 --match 0"]
    counts = anomaly_counts(flags, matches, errors)
    assert counts.height == 6 and counts.get_column("played").to_list() == [3] * 6
    assert dict(counts.select("flag", "matches").rows())["blowout"] == 1
    # the page lists the run-folder replay (frozen tables, checked against the row),
    # and, for a match that raised, the command that raises again
    from sim.report.html import _anomalies

    page = _anomalies(flags, counts, AnomalySettings(), "runs/my night")
    assert "sim replay &#x27;runs/my night&#x27; v:0" in page
    assert "sim match --seed 1 --match 2" in page and "--match 0" not in page


def test_the_headline_says_what_changed_in_words_and_units():
    prov = {"variants": [
        {"id": "baseline", "overrides": {}, "tables": {"techs": {"prosperity": {"cost": 500}}}},
        {"id": "p600", "overrides": {"techs.prosperity.cost": 600}, "tables": {}}]}
    assert override_words(prov, "p600", "baseline") == "techs.prosperity.cost 500 → 600"
    assert effect_text("victory=science", -0.175, -0.212, -0.138, True) == \
        "science −17.5 points [−21.2, −13.8]: changed"
    assert effect_text("end_turn", 1.04, 0.5, 1.6, False) == \
        "mean end turn +1.0 turns [+0.5, +1.6]: not shown to change"
    # the corrected p that decided it, since this interval excludes 0 on its own
    assert effect_text("victory=turn_limit", -0.025, -0.05, -0.001, False, 0.25) == \
        "turn_limit −2.5 points [−5.0, −0.1]: not shown to change (adjusted p 0.25)"
    tests = pl.DataFrame({"variant": ["p600"], "metric": ["victory=science"],
                          "difference": [-0.1], "lo": [-0.2], "hi": [-0.05],
                          "changed": [True]})
    mix = pl.DataFrame({"variant": ["p600"], "n_pairs": [200], "winner_changed": [30],
                        "victory_changed": [40]})
    (entry,) = headline(tests, mix, prov, "baseline")
    assert entry["winner_flips"] == 30 and entry["pairs"] == 200 and entry["changed"] == 1
    assert entry["effects"] == [("science −10.0 points [−20.0, −5.0]: changed", True)]


def test_gate_margins_per_victory_type():
    before = _matches([("v", i, "science" if i < 50 else "conquest", 90, 100)
                       for i in range(100)])
    now = _matches([("v", i, "science" if i < 54 else "conquest", 90, 100)
                    for i in range(100)])
    table = gate(now, before, paired=True, margin=0.02, margins={"conquest": 0.2,
                                                                 "science": 0.2})
    verdicts = dict(table.select("victory", "verdict").rows())
    margins = dict(table.select("victory", "margin").rows())
    assert margins["conquest"] == 0.2 and margins["dominance"] == 0.02
    assert verdicts["science"] == verdicts["conquest"] == "PASS"
    # 30 % of 2,000 matches turned to science, spread over the run as independent
    # matches are: decided against a 0.05 margin (FAIL), inside a 0.5 one (PASS): the
    # verdict follows each type's own margin (the gate's intervals are tuned to it)
    n = 2000
    spread = _matches([("v", i, "science" if i % 10 < 5 else "conquest", 90, 100)
                       for i in range(n)])
    moved = _matches([("v", i, "science" if i % 10 < 8 else "conquest", 90, 100)
                      for i in range(n)])
    strict = gate(moved, spread, paired=True, margin=0.2, margins={"science": 0.05})
    assert dict(strict.select("victory", "verdict").rows())["science"].startswith("FAIL")
    loose = gate(moved, spread, paired=True, margin=0.2, margins={"science": 0.5})
    assert dict(loose.select("victory", "verdict").rows())["science"] == "PASS"


def test_the_experiment_file_carries_gate_and_anomaly_settings(tmp_path):
    text = experiment_text() + """
[gate]
margin = 0.03
margins = { turn_limit = 0.05 }

[anomalies]
stall_turns = 12
early_elimination_turn = 20
"""
    path = tmp_path / "exp.toml"
    path.write_text(text)
    exp = load_experiment(path)
    assert exp.spec.gate.margin_of("turn_limit") == 0.05
    assert exp.spec.gate.margin_of("science") == 0.03
    settings = report_settings({"experiment": {"text": text}})
    assert settings.anomalies.stall_turns == 12
    assert settings.anomalies.early_elimination_turn == 20
    assert settings.anomalies.truce_cycles == AnomalySettings().truce_cycles
    # a run made before the sections existed reads the defaults
    assert report_settings({}).gate.margin == 0.02
    path.write_text(experiment_text() + "\n[gate]\nmargins = { peace = 0.05 }\n")
    with pytest.raises(ExperimentError, match=r"gate\.margins\.peace: unknown victory type"):
        load_experiment(path)
    path.write_text(experiment_text() + "\n[anomalies]\nstall = 3\n")
    with pytest.raises(ExperimentError, match=r"anomalies\.stall: unknown key"):
        load_experiment(path)
