"""Malformed scenario files and refused commands (SCENARIOS.md).

1. Every file under tests/scenarios/malformed/ is rejected by
   `sim scenario FILE --json` before anything runs: exit status 2, exactly one
   line on stderr naming the file, the offending key and (where the file has
   one) its line, nothing on stdout, no traceback.
2. A command the rules forbid is refused and leaves the whole state exactly as
   it was (sim.world.state.copy_state / states_equal), for many refusal kinds, with a
   reason a designer can read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.engine.scenario import ScenarioError, load_scenario, run_scenario
from sim.world.state import copy_state, states_equal
from tests.conftest import FIXTURE_TABLES, SCENARIOS

REPO = SCENARIOS.parent.parent
MALFORMED = SCENARIOS / "malformed"
SIM = REPO / ".venv" / "bin" / "sim"


def _sim_command() -> list[str]:
    if SIM.exists():
        return [str(SIM)]
    return [sys.executable, "-m", "sim.cli"]


# file -> (substrings naming the offending key, text ending on the offending line,
# or None when the file has no such line)
CASES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "unknown_key.toml": (("cities.0.colour",), 'colour = "red"'),
    "off_board_tile.toml": (("cities.1.at",), "at = [6, 0]"),
    "cities_too_close.toml": (("cities.1.at",), "at = [3, 0]"),
    "unknown_unit_type.toml": (("units.0.type",), 'type = "dragon"'),
    "unknown_building.toml": (("cities.0.buildings",), "buildings = "),
    "bad_seat_index.toml": (("cities.1.seat",), "seat = 2"),
    "missing_board.toml": (("board",), None),
    "wrong_value_type.toml": (("turn",), 'turn = "twelve"'),
    "unknown_command.toml": (("commands.0.do",), 'do = "fly"'),
    # the missing key has no line of its own: the command's table header
    "command_missing_key.toml": (("commands.0", "target"), "[[commands]]"),
    "unknown_override.toml": (("combat.damage_scal",), '"combat.damage_scal" = 5'),
    "override_wrong_type.toml": (("score.w_city",), '"score.w_city" = "ten"'),
    "invalid_toml.toml": (("turn",), "turn = = 3"),
    "command_target_off_board.toml": (("commands.0.to",), "to = [9, 0]"),
    "command_unknown_key.toml": (("commands.0.city",), "city = 0"),
    "population_above_ceiling.toml": (("cities.0.pop",), "pop = 6"),
    "unknown_tech.toml": (("seats.0.techs",), 'techs = ["law", "alchemy"]'),
    "dominance_counter_at_threshold.toml": (("seats.0.dominance_counter",),
                                            "dominance_counter = 8"),
    # every integer has a bound that keeps the engine's int64 arithmetic safe
    "gold_overflows_int64.toml": (("seats.0.gold",), "gold = 9223372036854775808"),
    "turn_too_large.toml": (("turn",), "turn = 9223372036854775807"),
    "truce_turns_too_large.toml": (("truces.0.turns",), "turns = 100000000000"),
    "unit_on_mountain.toml": (("units.0.at",),
                              '[[units]]\nseat = 0\ntype = "warrior"\nat = [1, 0]'),
    # a state no play reaches, or one entry silently replacing another
    "duplicate_tile.toml": (("board.tiles.1.at", "already listed"),
                            'terrain = "forest"\n\n[[board.tiles]]\nat = [2, 2]'),
    "duplicate_tech.toml": (("seats.0.techs.1", "listed twice"), 'techs = ["law", "law"]'),
    "duplicate_building.toml": (("cities.0.buildings.1", "listed twice"),
                                'buildings = ["granary", "granary"]'),
    "production_without_queue.toml": (("cities.0.production", "queue is empty"),
                                      "production = 10"),
    "revolt_cause_without_revolt.toml": (("cities.0.revolt_cause", "not in revolt"),
                                         'revolt_cause = "unrest"'),
}


def _line_of(path: Path, marker: str) -> int:
    """1-based line where `marker` ends (a marker may span lines to be unique)."""
    text = path.read_text()
    index = text.index(marker) + len(marker)
    return text.count("\n", 0, index) + 1


def test_every_malformed_file_has_a_case():
    files = sorted(p.name for p in MALFORMED.glob("*.toml"))
    assert len(files) >= 10
    assert files == sorted(CASES), "tests/scenarios/malformed and CASES disagree"


@pytest.mark.parametrize("name", sorted(CASES), ids=[n[:-5] for n in sorted(CASES)])
def test_malformed_file_rejected_by_cli(name):
    path = MALFORMED / name
    keys, marker = CASES[name]
    proc = subprocess.run(
        [*_sim_command(), "scenario", str(path), "--json", "--tables", str(FIXTURE_TABLES)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, f"exit {proc.returncode}; stderr: {proc.stderr!r}"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stdout == "", f"something ran or printed: {proc.stdout[:200]!r}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, f"stderr is not one line: {proc.stderr!r}"
    message = lines[0]
    assert str(path) in message, f"file not named: {message!r}"
    for key in keys:
        assert key in message, f"key {key!r} not named: {message!r}"
    if marker is not None:
        line = _line_of(path, marker)
        assert f"{path}:{line}:" in message or f"line {line}," in message, \
            f"line {line} not named: {message!r}"


@pytest.mark.parametrize("name", sorted(CASES), ids=[n[:-5] for n in sorted(CASES)])
def test_malformed_file_raises_scenario_error(name):
    """The library raises one ScenarioError (one line, naming the file) too."""
    path = MALFORMED / name
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, FIXTURE_TABLES)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message


# ---------------------------------------------------------------------------
# Refused commands leave the state unchanged.

# Seats: 0 (active, 5 gold, knows Prosperity), 1 (truce with 0), 2 (pact
# partner of 0 against 4), 3 (holds no city: out), 4 (the pact's target; not 1,
# whose truce with 0 a pact against it would lift: V07, our reading).
POSITION = """
name = "refusals"
turn = 7
active_seat = 0

[board]
radius = 8

[[board.tiles]]
at = [2, -1]
terrain = "mountain"

[[seats]]
gold = 5
techs = ["law", "philosophy", "prosperity"]
[[seats]]
gold = 0
[[seats]]
gold = 0
[[seats]]
gold = 0
[[seats]]
gold = 0

[[cities]]   # 0: seat 0's capital, Observatory queued
seat = 0
at = [0, 0]
pop = 2
queue = ["observatory"]
[[cities]]   # 1: seat 0, damaged (10 of 14 HP), empty queue
seat = 0
at = [-4, 0]
hp = 10
[[cities]]   # 2: seat 1 (truce), at 0 HP
seat = 1
at = [4, 0]
hp = 0
[[cities]]   # 3: seat 2 (pact partner), at 0 HP
seat = 2
at = [0, 4]
hp = 0
[[cities]]   # 4: seat 1's capital
seat = 1
at = [4, -4]
[[cities]]   # 5: seat 2's capital
seat = 2
at = [-4, 4]
[[cities]]   # 6: neutral village, full HP
seat = "neutral"
at = [0, -4]
[[cities]]   # 7: seat 4's capital, far from everyone
seat = 4
at = [-8, 1]

[[units]]    # 0: beside city 2
seat = 0
type = "warrior"
at = [3, 0]
[[units]]    # 1: beside city 3
seat = 0
type = "warrior"
at = [0, 3]
[[units]]    # 2: archer, range 2
seat = 0
type = "archer"
at = [1, -1]
[[units]]    # 3: settler 2 steps from cities 0 and 2
seat = 0
type = "settler"
at = [2, 0]
[[units]]    # 4: seat 1's warrior beside unit 0
seat = 1
type = "warrior"
at = [3, 1]
[[units]]    # 5: beside its own city 0
seat = 0
type = "warrior"
at = [-1, 0]
[[units]]    # 6: beside the village
seat = 0
type = "warrior"
at = [0, -3]

[[truces]]
seats = [0, 1]
turns = 5

[[pacts]]
members = [0, 2]
target = 4
turns = 5
"""

# id -> (setup commands, the refused command, words its reason must contain)
REFUSALS: dict[str, tuple[list[dict], dict, str]] = {
    "enter_truce_city_at_0_hp": ([], {"do": "enter", "unit": 0, "city": 2}, "truce with seat 1"),
    "attack_truce_city": ([], {"do": "attack", "unit": 0, "target": [4, 0]}, "truce"),
    "attack_truce_unit": ([], {"do": "attack", "unit": 0, "target": [3, 1]}, "truce"),
    "enter_pact_partner": ([], {"do": "enter", "unit": 1, "city": 3}, "pact with seat 2"),
    "attack_own_city": ([], {"do": "attack", "unit": 5, "target": [0, 0]}, "own"),
    "enter_not_adjacent": ([], {"do": "enter", "unit": 5, "city": 6}, "not next to"),
    "enter_city_with_hp": ([], {"do": "enter", "unit": 6, "city": 6}, "HP"),
    "enter_with_archer": ([], {"do": "enter", "unit": 2, "city": 6}, "capture"),
    "attack_out_of_range": ([], {"do": "attack", "unit": 2, "target": [0, -4]}, "range"),
    "attack_by_settler": ([], {"do": "attack", "unit": 3, "target": [3, 1]}, "cannot attack"),
    "attack_empty_tile": ([], {"do": "attack", "unit": 5, "target": [-2, 0]}, "nothing"),
    "attack_after_attack": ([{"do": "attack", "unit": 6, "target": [0, -4]}],
                            {"do": "attack", "unit": 6, "target": [0, -4]}, "no moves"),
    "move_impassable": ([], {"do": "move", "unit": 3, "to": [2, -1]}, "impassable"),
    "move_onto_foreign_city": ([], {"do": "move", "unit": 0, "to": [4, 0]}, "enter"),
    "move_too_far": ([], {"do": "move", "unit": 5, "to": [-3, 0]}, "path"),
    "move_occupied": ([], {"do": "move", "unit": 0, "to": [3, 1]}, "another unit"),
    "move_other_seats_unit": ([], {"do": "move", "unit": 4, "to": [3, 2]}, "belongs to"),
    "found_too_close": ([], {"do": "found", "unit": 3}, "too close"),
    "found_not_settler": ([], {"do": "found", "unit": 0}, "cannot found"),
    "buy_impassable": ([], {"do": "buy_tile", "city": 0, "at": [2, -1]}, "impassable"),
    "buy_in_region": ([], {"do": "buy_tile", "city": 0, "at": [1, 0]}, "region"),
    "buy_not_adjacent": ([], {"do": "buy_tile", "city": 0, "at": [3, -1]}, "not next to"),
    "buy_no_gold": ([], {"do": "buy_tile", "city": 0, "at": [2, 0]}, "not enough gold"),
    "buy_neutral_village": ([], {"do": "buy_tile", "city": 6, "at": [0, -2]}, "neutral village"),
    "buy_for_other_seat": ([], {"do": "buy_tile", "city": 4, "at": [5, -6]}, "belongs to seat 1"),
    "queue_second_observatory": ([], {"do": "queue", "city": 1, "item": "observatory"},
                                 "per empire"),
    "queue_observatory_without_prosperity": (
        [{"do": "set_seat", "seat": 2}], {"do": "queue", "city": 5, "item": "observatory"},
        "does not know"),
    "queue_unit_without_tech": ([], {"do": "queue", "city": 1, "item": "swordsman"},
                                "does not know"),
    "queue_settler_pop_1": ([], {"do": "queue", "city": 1, "item": "settler"}, "population"),
    "queue_in_foreign_city": ([], {"do": "queue", "city": 4, "item": "warrior"}, "belongs to"),
    "rush_observatory": ([], {"do": "rush", "city": 0}, "never be bought or rushed"),
    "rush_empty_queue": ([], {"do": "rush", "city": 1}, "empty"),
    "rush_no_gold": ([{"do": "queue", "city": 1, "item": "warrior"}],
                     {"do": "rush", "city": 1}, "not enough gold"),
    "repair_more_than_missing": ([], {"do": "repair", "city": 1, "hp": 5}, "missing HP"),
    "repair_full_city": ([], {"do": "repair", "city": 0, "hp": 1}, "missing HP"),
    "research_no_science": ([], {"do": "research", "tech": "bronze_working"}, "science"),
    "research_known": ([], {"do": "research", "tech": "law"}, "already knows"),
    "research_prerequisite": ([], {"do": "research", "tech": "iron_working"}, "prerequisites"),
    "truce_no_gold": ([], {"do": "truce", "with": 2}, "not enough gold"),
    "truce_already": ([], {"do": "truce", "with": 1}, "already"),
    "truce_with_eliminated": ([], {"do": "truce", "with": 3}, "eliminated"),
    "truce_with_self": ([], {"do": "truce", "with": 0}, "no such seat"),
    "set_seat_eliminated": ([], {"do": "set_seat", "seat": 3}, "eliminated"),
}


def _toml_command(cmd: dict) -> str:
    return "\n[[commands]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in cmd.items())


def _final_state(tmp_path: Path, name: str, commands: list[dict]):
    path = tmp_path / f"{name}.toml"
    path.write_text(POSITION + "".join(_toml_command(c) for c in commands))
    scn = load_scenario(path, FIXTURE_TABLES)
    report = run_scenario(scn, check=True)
    return scn.state, report


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refused_command_leaves_state_unchanged(tmp_path, case):
    setup, refused, words = REFUSALS[case]
    before, report = _final_state(tmp_path, "setup", setup)
    assert all(c["ok"] for c in report["commands"]), report["commands"]
    before = copy_state(before)
    after, report = _final_state(tmp_path, "refused", [*setup, refused])
    last = report["commands"][-1]
    assert last["ok"] is False, f"{case}: the command was accepted"
    assert last["error"] and words in last["error"], f"{case}: reason {last['error']!r}"
    assert "Traceback" not in last["error"]
    assert states_equal(before, after), f"{case}: a refused command changed the state"


def test_refused_commands_in_a_row_change_nothing(tmp_path):
    """All the refusals above, one after another in one file: still the position."""
    before, _ = _final_state(tmp_path, "none", [])
    before = copy_state(before)
    refused = [c for setup, c, _ in REFUSALS.values() if not setup]
    after, report = _final_state(tmp_path, "all", refused)
    assert not any(c["ok"] for c in report["commands"])
    assert states_equal(before, after)


FINISHED = """
name = "match over"
active_seat = 0

[board]
radius = 7

[[seats]]
gold = 50
[[seats]]
gold = 0

[[cities]]
seat = 0
at = [0, 0]
queue = ["warrior"]
[[cities]]
seat = 1
at = [5, 0]
hp = 0

[[units]]
seat = 0
type = "warrior"
at = [4, 0]
[[units]]
seat = 0
type = "warrior"
at = [-1, 0]

[[commands]]
do = "enter"
unit = 0
city = 1
"""


@pytest.mark.parametrize("cmd", [
    {"do": "end_turn"},
    {"do": "move", "unit": 1, "to": [-2, 0]},
    {"do": "buy_tile", "city": 0, "at": [2, 0]},
    {"do": "rush", "city": 0},
    {"do": "queue", "city": 0, "item": "warrior"},
], ids=lambda c: c["do"])
def test_commands_after_the_match_ended_are_refused(tmp_path, cmd):
    """V03: after conquest nothing more happens; the state stays as it ended."""
    path = tmp_path / "over.toml"
    path.write_text(FINISHED)
    scn = load_scenario(path, FIXTURE_TABLES)
    report = run_scenario(scn, check=True)
    assert report["finished"] and report["victory"] == "conquest"
    before = copy_state(scn.state)
    path2 = tmp_path / "over2.toml"
    path2.write_text(FINISHED + _toml_command(cmd))
    scn2 = load_scenario(path2, FIXTURE_TABLES)
    report2 = run_scenario(scn2, check=True)
    assert report2["commands"][-1]["ok"] is False
    assert "over" in report2["commands"][-1]["error"]
    assert states_equal(before, scn2.state)


def test_an_override_is_not_refused_for_a_generated_map_the_scenario_never_makes(tmp_path):
    """A scenario plays on its own [board] with its own cities: `map.radius = 5` (no
    room for a 4-seat generated map's starts, D1) is its designer's business, while a
    value the tables refuse outright still is an error."""
    path = tmp_path / "s.toml"
    text = ('name = "s"\n[overrides]\n"map.radius" = 5\n[board]\nradius = 6\n'
            '[[seats]]\n[[seats]]\n[[cities]]\nseat = 0\nat = [0, 0]\n'
            '[[cities]]\nseat = 1\nat = [4, 0]\n')
    path.write_text(text)
    scenario = load_scenario(path, FIXTURE_TABLES)
    assert run_scenario(scenario)["turn"] == 1
    path.write_text(text.replace('"map.radius" = 5', '"map.radius" = 4'))
    with pytest.raises(ScenarioError, match=r"s\.toml:3: overrides\.map\.radius: leaves no room"):
        load_scenario(path, FIXTURE_TABLES)
