"""`sim sensitivity` on a Crown experiment (issue 48 item 1): the design over Crown's
table levers through the game interface (Game.study_runner / study_analysis), the
paired effects on Crown's outcome metrics (CROWN.metrics), the same page and outputs
as the hex game's, and the hex game's settings refused."""

from __future__ import annotations

import polars as pl
import pytest

from sim.analysis.sensitivity_crown import observations, outcome_values, per_match
from sim.outputs.games import CROWN
from sim.outputs.store import scan
from sim.runner.sensitivity import SensitivityError, experiment_text, load_sensitivity
from tests.test_runs_support import sim, write

SENS = """
name = "crown-sens"
game = "crown"
root_seed = 3
matches = 40
chunk_size = 40
side_skill = [0, 0]
set = {{ "match.team_sizes" = [2, 2] }}
parameters = [{parameters}]
{extra}
"""


def test_the_metrics_are_the_games_and_defined_once():
    assert tuple(per_match()) == CROWN.metrics


def test_a_crown_design_moves_crown_levers_and_writes_a_crown_experiment(tmp_path):
    path = write(tmp_path / "s.toml", SENS.format(
        parameters='"attack.surge_bonus", "map.capture.*", "match.waves", "ai.surge_pct"',
        extra=""))
    d = load_sensitivity(path)
    keys = {p.key: p for p in d.parameters}
    assert set(keys) == {"attack.surge_bonus", "map.capture.W3", "map.capture.C3",
                         "map.capture.E3", "match.waves", "ai.surge_pct"}
    assert (keys["attack.surge_bonus"].low, keys["attack.surge_bonus"].high) == (1, 3)
    # CROWN.setup_keys: the match's shape and the AI's weights are ranked apart
    assert keys["match.waves"].group == keys["ai.surge_pct"].group == "setup"
    assert keys["map.capture.C3"].group == "balance"
    text = experiment_text(d)
    assert 'game = "crown"' in text and text.count("side_skill = [0, 0]") == 13
    assert d.to_json()["game"] == "crown"


@pytest.mark.parametrize(("extra", "why"), [
    ("seats = 4", "seats: the hex game's setting"),
    ("side_skill = [0, 5]", "side_skill: two AI skills"),
    ("morris_top = 2", "morris_top: the Morris screen reads the hex game's"),
])
def test_the_hex_games_settings_are_refused(tmp_path, extra, why):
    text = SENS.format(parameters='"attack.surge_bonus"', extra="").replace(
        "side_skill = [0, 0]\n", "") + extra + "\n"
    with pytest.raises(SensitivityError, match=why):
        load_sensitivity(write(tmp_path / "s.toml", text))


def test_a_value_the_tables_refuse_is_one_sided(tmp_path):
    """K10: majority_zones is at least 1 (the schema), so 1 moves up only."""
    path = write(tmp_path / "s.toml", SENS.format(parameters='"scoring.majority_zones"',
                                                  extra='').replace(
        '"match.team_sizes" = [2, 2]', '"match.team_sizes" = [2, 2], '
        '"scoring.majority_zones" = 1'))
    d = load_sensitivity(path)
    assert d.one_sided and d.parameters[0].low == 1 and d.parameters[0].high == 2


def test_sim_sensitivity_on_crown_ranks_the_surge_bonus_on_surge_decided_attacks(tmp_path):
    """K07: a larger Surge bonus makes more winning attacks ones only Surge won; skill 1's
    weight is never read at skill 0, so its two values play alike (inert)."""
    path = write(tmp_path / "s.toml", SENS.format(
        parameters='"attack.surge_bonus", "ai.surge_pct"', extra=""))
    proc = sim("sensitivity", path, "--out", tmp_path / "out", "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "surge_decided_share per +10 %: attack.surge_bonus +" in proc.stdout
    assert "inert (1): ai.surge_pct" in proc.stdout
    table = pl.read_parquet(tmp_path / "out" / "sensitivity.parquet")
    assert set(table["metric"]) <= set(CROWN.metrics)
    row = table.filter((pl.col("parameter") == "attack.surge_bonus")
                       & (pl.col("metric") == "surge_decided_share")).row(0, named=True)
    assert row["effect"] > 0 and row["changed"] and row["n_pairs"] == 40
    page = (tmp_path / "out" / "sensitivity.html").read_text()
    assert "<h2>surge_decided_share</h2>" in page and "victory=" not in page
    # the effects are the paired differences of the per-match metrics, played again here
    matches = scan(tmp_path / "out" / "sweep", "matches").collect()
    obs = observations(matches).filter(pl.col("metric") == "surge_decided_share")
    pairs = obs.filter(pl.col("variant") == "attack.surge_bonus-lo").join(
        obs.filter(pl.col("variant") == "attack.surge_bonus-hi"), on="match_index")
    assert row["low_value"] == pytest.approx(pairs["value"].mean())
    assert row["high_value"] == pytest.approx(pairs["value_right"].mean())
    # sim tune's outcomes are the same metrics' means over a variant's matches
    wins = outcome_values(matches, "baseline")["side_a_wins"]
    assert wins == pytest.approx(matches.filter(pl.col("variant") == "baseline")
                                 ["winner"].eq("A").mean())
