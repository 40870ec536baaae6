"""Golden match transcripts (tests/golden/, README there): every golden match replayed
turn by turn equals its file, and the file's last turn equals the fast path's result.

The files were written with the compiled kernels; the `-m nojit` run replays them with
the kernels interpreted (NUMBA_DISABLE_JIT=1), so it also checks that compiled and
plain-Python kernels play the same matches.
"""

from __future__ import annotations

import os
import re
import types

import pytest

from sim.engine.match import play_match
from sim.engine.report import state_report
from sim.engine.transcript import (
    event_words,
    first_difference,
    match_transcript,
    read_specs,
    split_blocks,
    transcript_blocks,
)
from sim.kernels.loop import run_match
from sim.kernels.rules.territory import resolve_regions
from sim.rules.codes import EVENT_NAMES, VICTORY_NAMES
from sim.rules.tables import load_tables
from tests.conftest import FIXTURE_TABLES, TESTS

GOLDEN = TESTS / "golden"
SPECS = read_specs(GOLDEN / "matches.toml")
REGENERATE = ("after an intended engine change: python tools/golden.py --write "
              "(tests/golden/README.md)")


def golden_text(spec) -> str:
    path = GOLDEN / f"{spec.name}.txt"
    assert path.exists(), f"{path} missing; {REGENERATE}"
    return path.read_text()


@pytest.mark.nojit
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_replay_matches_the_golden_transcript_turn_by_turn(spec):
    tables = load_tables(spec.tables)
    replay = transcript_blocks(tables, spec.seed, spec.match_index, spec.seats, spec.length)
    problem = first_difference(split_blocks(golden_text(spec)), replay, spec.name)
    assert problem is None, f"{problem}\n{REGENERATE}"


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_last_turn_of_the_transcript_agrees_with_the_fast_path(spec):
    """V01: the winner, victory, end turn and every standing seat's score written in the
    golden file's last block are those of `play_match` (the compiled whole-match loop)."""
    tables = load_tables(spec.tables)
    state, board, _log = play_match(tables, spec.seed, spec.match_index, spec.seats,
                                    spec.length)
    label, last = split_blocks(golden_text(spec))[-1]
    result = re.search(r"^result: seat (\d+) wins, (\w+) victory, turn (\d+)$", last, re.M)
    assert result, f"{spec.name}: the last block ({label}) has no result line"
    winner, victory, end_turn = int(result[1]), result[2], int(result[3])
    assert (winner, victory, end_turn) == (int(state.winner[0]),
                                            VICTORY_NAMES[int(state.victory[0])],
                                            int(state.turn[0]))
    # the block of turn N lists turn N+1's opening (sim.engine.transcript), so a match
    # won at that opening's flow (an Observatory completing, V16) ends in block N
    assert label in (f"turn {end_turn}", f"turn {end_turn - 1}")
    scores = {int(s): int(v) for s, v in re.findall(r"^seat (\d+): score (\d+) ", last, re.M)}
    report = state_report(state, tables, board)
    assert scores == {s["seat"]: s["score"] for s in report["seats"] if s["alive"]}
    if victory == "turn_limit":
        assert scores[winner] == max(scores.values())  # V19


def test_golden_files_are_the_listed_matches_on_the_fixture_tables():
    """Never tables/default.toml; one file per listed match, none unlisted, a 2-, 4- and
    6-seat setup, each small enough to read as a diff, and no tables hash in them (the
    fixture tables may gain keys with unchanged values)."""
    tables = load_tables(FIXTURE_TABLES)
    assert {s.tables for s in SPECS} == {FIXTURE_TABLES}
    assert sorted(s.seats for s in SPECS) == [2, 4, 6]
    assert {p.stem for p in GOLDEN.glob("*.txt")} == {s.name for s in SPECS}
    for spec in SPECS:
        text = golden_text(spec)
        assert len(text.encode()) < 250_000, spec.name
        assert tables.hash not in text, spec.name
        header = text.splitlines()[1]
        assert header.startswith(f"seed {spec.seed}, match {spec.match_index}, "
                                 f"{spec.seats} seats, length {spec.length} "), header


def test_first_difference_names_the_first_differing_turn_and_diffs_only_its_block(tables):
    spec = SPECS[1]
    want = split_blocks(golden_text(spec))
    assert first_difference(want, iter(want)) is None
    changed = dict(want)
    turn5, turn9 = changed["turn 5"], changed["turn 9"]
    # markers no real gold stock reads like
    changed["turn 5"] = turn5.replace("| gold ", "| gold 77770", 1)
    changed["turn 9"] = turn9.replace("| gold ", "| gold 88880", 1)
    got = [(label, changed[label]) for label, _text in want]
    problem = first_difference(want, got, "x")
    assert problem is not None
    assert problem.splitlines()[0] == "x: first difference at turn 5"
    removed = [ln for ln in problem.splitlines() if ln.startswith("-") and "| gold" in ln]
    added = [ln for ln in problem.splitlines() if ln.startswith("+") and "| gold 77770" in ln]
    assert len(removed) == len(added) == 1
    assert "turn 9" not in problem and "| gold 88880" not in problem
    # the diff shows that block's lines only, never the rest of the file
    assert len(problem.splitlines()) <= len(turn5.splitlines()) + 5
    # a replay that ends early or goes on is named too
    assert "ended at block" in first_difference(want, want[:-1], "x")
    assert "past the golden file's end" in first_difference(want[:-1], want, "x")


def test_transcript_text_splits_back_into_its_blocks(tables):
    """What tools/golden.py writes (match_transcript) is what the test compares
    against, block by block (transcript_blocks): one function makes both."""
    blocks = list(transcript_blocks(tables, 3, 0, 2, "short"))
    assert [b[0] for b in blocks[:3]] == ["header", "start", "turn 1"]
    assert split_blocks(match_transcript(tables, 3, 0, 2, "short")) == blocks


def test_every_event_kind_has_words():
    fields = {"turn": 1, "seat": 0, "by": 1, "city": 2, "unit": 3, "new_capital": 4,
              "turns": 2, "cause": "unrest", "victory": "science", "price": 5, "at": [0, 1],
              "camp": 0, "gold": 9, "item": "warrior", "type": "settler",
              "attacker": "archer", "target": "warrior", "damage": 6, "taken": 0,
              "tech": "law", "cost": 7, "hp": 3, "cities": 2, "units": 1}
    words = {kind: event_words({**fields, "kind": kind}, {"cities": []})
             for kind in EVENT_NAMES}
    assert len(set(words.values())) == len(EVENT_NAMES)  # no two kinds read alike
    with pytest.raises(ValueError, match="no words"):
        event_words({**fields, "kind": "meteor"}, {"cities": []})


@pytest.mark.nojit
def test_the_nojit_run_plays_the_kernels_as_plain_python():
    """With NUMBA_DISABLE_JIT=1 the kernels are the plain functions (tracebacks and
    coverage reach their bodies); without it they are compiled dispatchers."""
    interpreted = os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0")
    for kernel in (run_match, resolve_regions):
        assert isinstance(kernel, types.FunctionType) == interpreted, kernel
