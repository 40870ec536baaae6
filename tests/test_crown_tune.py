"""`sim tune` on a Crown experiment (issue 48 item 1): bands on Crown's outcome metrics
(CROWN.metrics), keys over Crown's table values, a tune around 2 v 3 (`set`), each
trial an ordinary Crown sweep scored by the game's outcome_values, and the
confirmation's before/after on fresh matches."""

from __future__ import annotations

import json

import polars as pl
import pytest

from sim.analysis.sensitivity_crown import confirm_table
from sim.outputs.games import CROWN
from sim.outputs.store import scan
from sim.runner.tune import TuneError, load_tune
from tests.test_runs_support import sim, write

TUNE = """
name = "crown-tune"
game = "crown"
root_seed = 9
matches = 30
chunk_size = 30
trials = 3
startup_trials = 2
confirm_matches = 40
set = {{ "match.team_sizes" = [2, 3] }}
{extra}
[bands]
{bands}

[keys]
"attack.surge_bonus" = [0, 6]
"""


def test_a_crown_tune_bands_crowns_metrics(tmp_path):
    tune = load_tune(write(tmp_path / "t.toml", TUNE.format(
        extra="", bands="side_a_wins = [0.45, 0.55]\ndraws = [0.0, 0.05]")))
    assert tune.outcomes == CROWN.metrics and tune.keys[0].integer
    assert tune.fingerprint()["game"] == "crown"


@pytest.mark.parametrize(("extra", "bands", "why"), [
    ("", "conquest = [0.1, 0.2]", "bands.conquest: no such outcome; bands may be set on "
     "side_a_wins"),
    ("", "side_a_wins = [45, 55]", "a share's band lies within"),
    ("seats = 4", "side_a_wins = [0.4, 0.6]", "seats: the hex game's setting"),
    ('game = "chess"', "side_a_wins = [0.4, 0.6]", "unknown game 'chess'"),
])
def test_a_crown_tune_refuses_what_crown_does_not_have(tmp_path, extra, bands, why):
    text = TUNE.format(extra=extra, bands=bands)
    if extra.startswith("game"):
        text = text.replace('game = "crown"\n', "")
    with pytest.raises(TuneError, match=why):
        load_tune(write(tmp_path / "t.toml", text))


def test_sim_tune_on_crown_scores_each_trial_by_its_own_matches(tmp_path):
    path = write(tmp_path / "t.toml", TUNE.format(extra="",
                                                  bands="side_a_wins = [0.45, 0.55]"))
    proc = sim("tune", path, "--out", tmp_path / "out", "--jobs", "1")
    # 2 v 3 stays far from even on these few values: the budget ends outside the band
    assert proc.returncode in (0, 4), proc.stderr
    assert "side_a_wins" in proc.stdout
    history = pl.read_parquet(tmp_path / "out" / "tune.parquet")
    assert history.height == 3 and set(CROWN.metrics) <= set(history.columns)
    for row in history.iter_rows(named=True):
        matches = scan(tmp_path / "out" / "trials" / f"{row['trial']:04d}" / "sweep",
                       "matches").collect()
        # L4: every trial plays the tune's 2 v 3 with its proposed Surge bonus
        assert set(matches["team_a"]) == {2} and set(matches["team_b"]) == {3}
        assert row["side_a_wins"] == pytest.approx((matches["winner"] == "A").mean())
        assert row["distance"] == pytest.approx(max(0.45 - row["side_a_wins"], 0.0,
                                                    row["side_a_wins"] - 0.55))
    result = json.loads((tmp_path / "out" / "tune.json").read_text())
    confirm = scan(tmp_path / "out" / "confirm" / "sweep", "matches").collect()
    table = confirm_table(confirm, {"side_a_wins": (0.45, 0.55)}, "baseline", "tuned")
    assert result["confirm"]["table"][0]["outcome"] == "side_a_wins"
    row = table.row(0, named=True)
    assert row["n_pairs"] == 40 and row["before"] == pytest.approx(
        (confirm.filter(pl.col("variant") == "baseline")["winner"] == "A").mean())
    assert row["before_lo"] <= row["before"] <= row["before_hi"]
    assert result["confirm"]["table"][0]["after"] == pytest.approx(row["after"])
