"""`sim replay` on a Crown run (issue 48 item 1): a match of the run played again from
the run's provenance (the variant's resolved tables and side skills) and the row's
seed (L7: the stream is keyed by root seed and match index only), equal to the run's
`matches` row in every column and to its `rounds` rows round by round."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from sim.outputs.games import CROWN
from sim.outputs.store import scan
from sim.rules.crown import load_crown_tables
from sim.runner.experiments import load_experiment
from sim.runner.replay import ReplayError, replay_transcript, variant_tables
from sim.runner.sequential import extend_run
from sim.runner.sweep import run_sweep
from tests.test_runs_support import quiet_run, sim, write

TINY = """
name = "crown-replay"
game = "crown"
root_seed = 11
matches = 5
chunk_size = 3
baseline = "baseline"

[[variants]]
name = "baseline"

[[variants]]
name = "teams-2v3-skill1"
set = { "match.team_sizes" = [2, 3], "core.faces.7" = "booster" }
side_skill = [1, 0]
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return quiet_run(tmp_path_factory.mktemp("crown-replay"), "crown", TINY)


def test_every_replayed_match_equals_the_runs_matches_and_rounds_rows(run):
    matches = scan(run, "matches").collect()
    rounds = scan(run, "rounds").collect()
    assert matches.height == 10
    for row in matches.iter_rows(named=True):
        got = replay_transcript(run, row["match_id"])
        for key, value in got["row"].items():
            assert row[key] == value, (row["match_id"], key)
        theirs = (rounds.filter(pl.col("match_id") == row["match_id"]).sort("round")
                  .drop("match_id", "match_index", "variant").to_dicts())
        assert got["rounds"] == theirs
        # K10, K11: the round_score events add up to the row's totals
        scores = [e for e in got["events"] if e["kind"] == "round_score"]
        for side in ("A", "B"):
            assert sum(e["points"] for e in scores if e["side"] == side) == \
                row[f"total_{side.lower()}"]
        # K05: every wave opens with each player's roll, side A's players first (L4)
        rolls = [e for e in got["events"] if e["kind"] == "roll"]
        assert len(rolls) == 10 * 3 * (row["team_a"] + row["team_b"])
        assert [e["side"] for e in rolls[: row["team_a"] + row["team_b"]]] == \
            ["A"] * row["team_a"] + ["B"] * row["team_b"]


def test_the_rebuilt_tables_keep_the_maps_zone_order(run):
    """provenance.json sorts its keys, so map.zones is stored as a list in map order
    (CrownTables.stored): the rebuild gives each zone its kernel index again."""
    prov = json.loads((run / "provenance.json").read_text())
    rebuilt = variant_tables(run, prov, prov["variants"][0]).record
    loaded = load_crown_tables().record
    for field in loaded.dtype.names:
        assert (rebuilt[field] == loaded[field]).all(), field


def test_a_failed_or_missing_match_is_one_line(run):
    with pytest.raises(ReplayError, match="no match 'baseline:7'"):
        replay_transcript(run, "baseline:7")


def test_sim_replay_prints_a_crown_match_round_by_round(run):
    proc = sim("replay", run, "teams-2v3-skill1:4", "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["game"] == CROWN.name and found["row"]["skill_a"] == 1
    assert [r["round"] for r in found["rounds"]] == list(range(1, 11))
    text = sim("replay", run, "baseline:0")
    assert text.returncode == 0 and "replayed bit for bit" in text.stdout
    assert len(text.stdout.splitlines()) == 12   # the outcome, the header, 10 rounds
    bad = sim("replay", run, "baseline:0", "--seed", "3")
    assert bad.returncode == 2 and "--seed" in bad.stderr


def _reversed_zones(text: str) -> str:
    """The default tables' text with the [map.zones] lines in reverse (E5 first): not
    alphabetical, not by region, so only a stored order gives it back."""
    lines = text.splitlines()
    start = lines.index("[map.zones]") + 1
    stop = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return "\n".join([*lines[:start], *reversed(lines[start:stop]), *lines[stop:]]) + "\n"


def test_a_zone_order_the_tables_file_gives_survives_the_run(tmp_path):
    """L4: a zone's place in the map is its kernel index (the homes' and every draw's
    by zone). A tables file listing its zones in another order is swept; the run's
    provenance keeps that order (and its hash counts it), so `sim extend` plays the
    matches a bigger sweep would have and `sim replay` reproduces every row."""
    default = load_crown_tables()
    tables_file = write(tmp_path / "reversed.toml",
                        _reversed_zones(Path(default.source).read_text()))
    mine = load_crown_tables(tables_file)
    assert mine.zone_names == list(reversed(default.zone_names))
    assert mine.data == {**default.data, "map": {**default.data["map"],
                                                 "zones": mine.data["map"]["zones"]}}
    assert mine.hash != default.hash  # the order counts in the hash

    def experiment(name: str, matches: int) -> Path:
        text = TINY.replace("matches = 5", f"matches = {matches}").replace(
            'baseline = "baseline"\n', f'baseline = "baseline"\ntables = {str(tables_file)!r}\n', 1)
        return write(tmp_path / f"{name}.toml", text)

    small, whole = experiment("small", 3), experiment("whole", 5)
    run_sweep(load_experiment(small), tmp_path / "grown", progress=False, say=lambda _: None)
    prov = json.loads((tmp_path / "grown" / "provenance.json").read_text())
    assert [z["zone"] for z in prov["variants"][0]["tables"]["map"]["zones"]] == \
        mine.zone_names
    rebuilt = variant_tables(tmp_path / "grown", prov, prov["variants"][0])
    assert rebuilt.zone_names == mine.zone_names and rebuilt.hash == mine.hash
    extend_run(tmp_path / "grown", 5)
    run_sweep(load_experiment(whole), tmp_path / "whole", progress=False, say=lambda _: None)
    for table in CROWN.tables:
        keys = ["variant", *CROWN.sort_keys[table]]
        grown = scan(tmp_path / "grown", table).collect().sort(keys)
        swept = scan(tmp_path / "whole", table).collect().sort(keys)
        assert grown.drop("replay", strict=False).equals(
            swept.drop("replay", strict=False)), table
    grown = scan(tmp_path / "grown", "matches").collect()
    assert grown.height == 10
    for row in grown.iter_rows(named=True):
        got = replay_transcript(tmp_path / "grown", row["match_id"])
        assert all(row[k] == v for k, v in got["row"].items()), row["match_id"]
