"""What differs between games reaches the shared code as fields of their Game record
(sim.outputs.games), never as a test of the game's name: the errors rows of a chunk
that could not be played (Game.replay_command), `sim bench match` (Game.match_bench)
and `sim scenario` (Game.scenario_runner)."""

from __future__ import annotations

import shlex

import pytest
from typer.testing import CliRunner

from sim.cli import app
from sim.outputs.games import CROWN, HEX, game_of
from sim.runner.chunk import RunSettings, error_frames
from sim.runner.experiments import ChunkSpec


def _settings(game: str) -> RunSettings:
    return RunSettings(out="/nowhere", tables_path="tables/default.toml",
                       overrides_by_variant={"dom5": {"dominance.counter_to_win": 5}},
                       root_seed=31, seats=4, length="short",
                       personalities=("builder", "warlord"), rotate=True,
                       seat_ai_by_variant={"dom5": [{"skill": 1}, {}, {}, {}]}, game=game)


def test_a_chunk_not_played_has_the_hex_games_sim_match_command_in_each_errors_row():
    """Each of the chunk's matches is a row carrying the message and the `sim match`
    command seated as the sweep seats that match (personalities rotated by index)."""
    frames = error_frames(_settings("hex"), ChunkSpec("dom5", 2, 10, 13), "worker died")
    errors = frames["errors"]
    assert errors["match_index"].to_list() == [10, 11, 12]
    assert set(errors["message"]) == {"worker died"}
    first, second = (shlex.split(c) for c in errors["replay"].to_list()[:2])
    assert first[:4] == ["sim", "match", "--seed", "31"] and first[5] == "10"
    assert "--set" in first and 'dominance.counter_to_win=5' in first
    assert first[first.index("--personalities") + 1] == "builder,warlord,builder,warlord"
    assert second[second.index("--personalities") + 1] == "warlord,builder,warlord,builder"
    assert first[first.index("--seat-ai") + 1] == '[{"skill":1},{},{},{}]'
    assert all(frame.height == 0 for name, frame in frames.items() if name != "errors")


def test_a_crown_chunk_not_played_has_rows_without_a_replay_command():
    frames = error_frames(_settings("crown"), ChunkSpec("dom5", 0, 0, 2), "worker died")
    assert frames["errors"]["replay"].to_list() == ["", ""]
    assert set(frames) == set(CROWN.tables)


def test_each_game_record_names_its_own_replay_bench_and_scenario():
    assert HEX.replay_command_for(_settings("hex"), "dom5", 3).startswith(
        "sim match --seed 31 --match 3 ")
    assert CROWN.replay_command_for(_settings("crown"), "dom5", 3) == ""
    assert {g.match_bench for g in (HEX, CROWN)} == {
        "sim.runner.bench:hex_match_bench", "sim.runner.bench:crown_match_bench"}
    assert HEX.scenario_runner != CROWN.scenario_runner


@pytest.mark.parametrize("command", [["bench", "match"], ["scenario", "x.toml"]])
def test_an_unknown_game_is_refused_naming_the_games(command):
    done = CliRunner().invoke(app, [*command, "--game", "chess"])
    assert done.exit_code == 2 and "hex or crown" in done.output
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        game_of("chess")


def test_a_skill_the_game_does_not_have_is_refused_before_any_match():
    done = CliRunner().invoke(app, ["bench", "match", "--game", "crown", "--skill", "7"])
    assert done.exit_code == 2 and "--skill" in done.output
    assert ", ".join(map(str, CROWN.ai_levels)) in done.output
