"""The ladder (issue 43): random legal play, a ladder file's pairings, the sweep that
plays them, the win-rate matrix, the ratings and the monotone verdict; and an
experiment's `skills`, which plays every variant at two levels."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sim.analysis.ladder import (
    bradley_terry,
    ladder_games,
    monotone_steps,
    openskill_ratings,
    read_ladder,
    verdict,
    win_matrix,
)
from sim.analysis.load import load_run
from sim.analysis.robustness import skill_effects, skill_interactions
from sim.cli import app
from sim.engine.match import iter_turns, new_match, outcome, play_match
from sim.engine.seat_ai import check_seat_ai
from sim.kernels.ai import random_play as RP
from sim.kernels.ai.diplomacy import accepts_truce
from sim.kernels.rules.capture import enter_check_at
from sim.kernels.rules.combat import attack_outcome_at
from sim.kernels.rules.commands import found_check, move_unit_at
from sim.outputs.ladder import LadderSpec, ladder_of_text, pairings
from sim.report.html import build_report
from sim.rules import codes as R
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.ladder import ladder_experiment
from sim.world.rng import Purpose, stream_seed
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import experiment_text, write

# --- random legal play ------------------------------------------------------------

@pytest.mark.nojit
def test_random_is_a_seat_setting_with_its_own_code(tables):
    got = check_seat_ai(tables, [{"skill": "random"}, {}], 2)
    assert got[0] == {"skill": "random", "forbid": []}
    assert R.SKILL_RANDOM not in R.SKILLS  # not a level of D11: no bench row, no `skills`


def _copy(st):
    """A copy of a state record that a rule function may change."""
    holder = np.zeros(1, dtype=st.dtype)
    holder[0] = st
    return holder[0]


def test_a_random_units_options_are_every_legal_step_strike_entry_and_founding(tables):
    """unit_options lists exactly what the rules allow a unit: every neighbour a move
    command accepts, every tile in reach an attack accepts, every city an entry accepts,
    founding when the settler may found, and staying; nothing else."""
    tb = tables.arrays(None, 2)
    checked = 0
    for step in iter_turns(tables, 5, 1, 2, seat_ai=[{"skill": "random"}, {}]):
        st, board = step.state, step.board
        if step.played not in (1, 8, 16, 24) or st.finished[0]:
            continue
        places = np.empty(2 + 12 + board.disc.shape[1], dtype=np.int64)
        for seat in range(2):
            for u in range(int(st.n_units[0])):
                if st.unit_tile[u] < 0 or st.unit_owner[u] != seat:
                    continue
                cp = _copy(st)
                cp.unit_moves_left[u] = max(cp.unit_moves_left[u], 1)
                opt = RP.unit_options(cp, tb, board, np.int64(u), np.int64(seat), places)
                kinds = ["stay"] + ["found"] * opt.found + ["move"] * opt.move + \
                    ["enter"] * opt.enter + ["strike"] * opt.strike
                got = list(zip(kinds, places[:len(kinds)].tolist(), strict=True))
                here = int(cp.unit_tile[u])
                want = {("stay", -1)}
                for m in board.neighbours[here]:
                    if m >= 0 and move_unit_at(_copy(cp), tb, board.neighbours, board.distance,
                                               np.int64(u), np.int64(m), np.int64(seat)) == R.OK:
                        want.add(("move", int(m)))
                    c = int(cp.tile_site[m]) if m >= 0 else -1
                    if c >= 0 and enter_check_at(cp, tb, board.distance, np.int64(u),
                                                 np.int64(c), np.int64(seat)) == R.OK:
                        want.add(("enter", c))
                for t in range(int(cp.n_tiles[0])):
                    if attack_outcome_at(cp, tb, board.distance, np.int64(u), np.int64(t),
                                         np.int64(seat))[0] == R.OK:
                        want.add(("strike", t))
                if found_check(cp, tb, board, np.int64(u), np.int64(seat)) == R.OK:
                    want.add(("found", here))
                # no option twice: each has chance 1 / len(got)
                assert len(set(got)) == len(got) and set(got) == want, (step.played, seat, u)
                checked += 1
    assert checked > 20


def test_random_play_obeys_the_rules_and_loses_to_skill_0(tables):
    """The invariant checker passes after every turn of matches with a random seat (one
    against skill 0, one with two random seats: their truces answered at random), and
    skill 0 wins the 2-seat matches against it, in either seat (seeded: a random seat
    founds few cities and strikes at random)."""
    play_match(tables, 11, 0, 2, check=True, seat_ai=[{"skill": "random"}, {}])
    both = play_match(tables, 11, 1, 2, check=True,
                      seat_ai=[{"skill": "random"}, {"skill": "random"}])[0]
    # two random seats play a whole match: they research, found, build and fight
    assert both.seat_techs[:2].sum() > 0 and both.n_cities[0] > 2
    wins = 0
    for m in range(8):
        seat_ai = [{"skill": "random"}, {}] if m % 2 == 0 else [{}, {"skill": "random"}]
        st = play_match(tables, 12, m, 2, seat_ai=seat_ai)[0]
        wins += int(st.winner[0] == (1 if m % 2 == 0 else 0))
    assert wins >= 7


def test_a_random_seat_answers_a_truce_from_its_own_stream(tables):
    """Asked for a truce, a random-play seat accepts about half the time over the keys
    of its stream, whatever the price; a skill-0 seat answers by its reading (the
    same answer for every key)."""
    st, board = new_match(tables, 9, 0, 2)
    tb = tables.arrays(None, 2)
    answers, skilled = [], set()
    for k in range(400):
        st.rng_random[1] = np.uint64(stream_seed(1, k, Purpose.RANDOM_PLAY, 1))
        st.seat_skill[1] = R.SKILL_RANDOM
        answers.append(accepts_truce(st, tb, board.distance, np.int64(1), np.int64(0),
                                     np.int64(0)))
        st.seat_skill[1] = 0
        skilled.add(bool(accepts_truce(st, tb, board.distance, np.int64(1), np.int64(0),
                                       np.int64(0))))
    assert 160 < sum(answers) < 240
    assert len(skilled) == 1


def test_a_random_seat_draws_from_its_own_stream_and_changes_no_other(tables):
    free = play_match(tables, 4, 2, 2)
    held = play_match(tables, 4, 2, 2, seat_ai=[{"skill": "random"}, {}])
    again = play_match(tables, 4, 2, 2, seat_ai=[{"skill": "random"}, {}])
    st, st_free = held[0], free[0]
    assert int(st.rng_random[0]) == stream_seed(4, 2, Purpose.RANDOM_PLAY, 0)
    assert int(st.rng_random[1]) == 0 and int(st_free.rng_random[0]) == 0
    assert st.rng_ai.tolist() == st_free.rng_ai.tolist()
    assert st.rng_events[0] == st_free.rng_events[0]
    # a random seat plays its own turn: it gives the skill-0 AI no orders
    assert st_free.seat_plan[0] == -1 and st.seat_plan[0] == -1
    assert st.tobytes() != st_free.tobytes()
    # and the same match plays the same way again
    first = outcome(held[0], tables, held[1], held[2], 4, 2)
    assert outcome(again[0], tables, again[1], again[2], 4, 2) == first
    assert first["seats"][0]["skill"] == R.SKILL_RANDOM


# --- the ladder file and its pairings -----------------------------------------------

LADDER = """
name = "ladder-test"
tables = "{tables}"
[ladder]
agents = ["random", "skill-0", {{ name = "no-walls", forbid = ["walls"] }}]
seats = {seats}
matches = {matches}
seed = 7
length = "short"
chunk_size = 4
"""


@pytest.mark.nojit
def test_pairings_play_every_pair_in_both_seat_orders():
    spec = LadderSpec.model_validate({"agents": ["random", "skill-0", "skill-1"],
                                      "matches": 10, "seed": 1, "seats": 4})
    got = dict(pairings(spec))
    assert len(got) == 6
    assert got["random.vs.skill-0"] == ["random", "skill-0", "random", "skill-0"]
    assert got["skill-0.vs.random"] == ["skill-0", "random", "skill-0", "random"]


@pytest.mark.nojit
@pytest.mark.parametrize(("agents", "needle"), [
    (["skill-0", "skill-0"], "share a name"),
    (["skill-0", {"name": "greedy", "skill": 0}], "same settings"),
    (["skill-0", "skill-9"], "skill 9"),
    (["skill-0", "best"], "skill-N"),
    (["skill-0", {"name": "a.vs.b", "skill": 1}], r"\.vs\."),
])
def test_a_bad_agent_list_is_refused(agents, needle):
    with pytest.raises(ValueError, match=needle):
        LadderSpec.model_validate({"agents": agents, "matches": 10, "seed": 1})


@pytest.mark.nojit
def test_a_ladder_file_becomes_a_sweep_of_its_pairings(tmp_path):
    path = write(tmp_path / "l.toml", LADDER.format(tables=FIXTURE_TABLES, seats=2, matches=8))
    ladder, experiment = ladder_experiment(path)
    assert [v.id for v in experiment.variants] == [name for name, _ in pairings(ladder)]
    by_id = {v.id: v for v in experiment.variants}
    assert [e["skill"] for e in by_id["random.vs.no-walls"].seat_ai] == ["random", 0]
    assert by_id["random.vs.no-walls"].seat_ai[1]["forbid"] == ["walls"]
    assert experiment.spec.matches == 8 and experiment.seats == 2
    bad = write(tmp_path / "b.toml", LADDER.format(tables=FIXTURE_TABLES, seats=2, matches=0))
    with pytest.raises(ExperimentError, match=r"ladder\.matches"):
        ladder_experiment(bad)
    assert ladder_of_text("name = 'x'\n") is None


# --- the reading: matrix, ratings, verdict -------------------------------------------

def _games(strength: dict[str, float], n: int, seed: int = 0) -> pl.DataFrame:
    """Two-seat games of every pair, both orders, n each: agent i beats j with the
    Bradley-Terry chance of their strengths."""
    rng = np.random.default_rng(seed)
    rows = []
    names = list(strength)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for first, second in ((a, b), (b, a)):
                p = 1 / (1 + np.exp(strength[second] - strength[first]))
                for m in range(n):
                    rows.append((f"{first}.vs.{second}", m, first, second,
                                 first if rng.random() < p else second))
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_index": pl.Int64,
                                      "first": pl.Utf8, "second": pl.Utf8,
                                      "winner": pl.Utf8}, orient="row")


def _spec(agents: list[str], seats: int = 2) -> LadderSpec:
    return LadderSpec.model_validate({"agents": agents, "matches": 1, "seed": 1,
                                      "seats": seats})


@pytest.mark.nojit
def test_a_graded_ladder_is_monotone_and_rated_in_order():
    strength = {"random": -1.5, "skill-0": 0.0, "skill-1": 1.0}
    games = _games(strength, 200)
    agents = list(strength)
    matrix = win_matrix(games, agents)
    row = matrix.filter((pl.col("agent") == "skill-1") & (pl.col("opponent") == "skill-0"))
    assert row["wins"][0] + row["losses"][0] == 400
    assert row["lo"][0] < row["share"][0] < row["hi"][0]
    steps = monotone_steps(matrix, _spec(agents))
    assert steps["beats"].to_list() == [True, True]
    assert verdict(steps).startswith("monotone")
    bt = bradley_terry(games, agents)
    assert bt["agent"].to_list() == ["skill-1", "skill-0", "random"]
    r = dict(zip(bt["agent"], bt["rating"], strict=True))
    # the fitted gaps are the planted ones, within sampling error
    assert r["skill-1"] - r["skill-0"] == pytest.approx(1.0, abs=0.35)
    assert (bt["lo"] < bt["rating"]).all() and (bt["rating"] < bt["hi"]).all()
    os_ = openskill_ratings(games, agents)
    assert os_["agent"].to_list() == ["skill-1", "skill-0", "random"]


@pytest.mark.nojit
def test_two_equal_rungs_are_not_monotone():
    games = _games({"skill-0": 0.0, "skill-1": 0.0}, 150, seed=3)
    steps = monotone_steps(win_matrix(games, ["skill-0", "skill-1"]),
                           _spec(["skill-0", "skill-1"]))
    assert steps["beats"].to_list() == [False]
    assert verdict(steps).startswith("not monotone")


@pytest.mark.nojit
def test_games_name_the_winning_seats_agent_in_a_four_seat_pairing():
    spec = _spec(["skill-0", "random"], seats=4)
    matches = pl.DataFrame({"variant": ["skill-0.vs.random", "random.vs.skill-0",
                                        "skill-0.vs.random"],
                            "match_index": [0, 0, 1], "winner": [3, 2, None]})
    games = ladder_games(matches, spec)
    assert games["winner"].to_list() == ["random", "random", None]
    matrix = win_matrix(games, ["skill-0", "random"])
    row = matrix.filter(pl.col("agent") == "random").row(0, named=True)
    assert (row["wins"], row["losses"], row["draws"]) == (2, 0, 1)


# --- end to end ---------------------------------------------------------------------

def test_sim_ladder_plays_the_pairings_and_prints_the_verdict(tmp_path):
    path = write(tmp_path / "l.toml", LADDER.format(tables=FIXTURE_TABLES, seats=2, matches=8))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["ladder", str(path), "--jobs", "1", "--out", str(out),
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert "head-to-head" in result.output and "verdict:" in result.output
    run = load_run(out)
    assert run.matches.height == 6 * 8
    skills = run.seats.filter(pl.col("variant") == "random.vs.skill-0").group_by("seat") \
        .agg(pl.col("skill").first()).sort("seat")["skill"].to_list()
    assert skills == [R.SKILL_RANDOM, 0]
    read = read_ladder(run.matches, run.provenance)
    assert read is not None and read["games"].height == 48
    assert int(read["matrix"]["wins"].sum() + read["matrix"]["draws"].sum() // 2) == 48
    page = build_report(out)  # a ladder run's report opens with its heat map
    assert "<h2>Ladder: " in page and "Head to head: the row agent" in page


# --- conclusions at two levels --------------------------------------------------------

@pytest.mark.nojit
def test_skills_play_every_variant_at_both_levels(tmp_path):
    extra = '\n[[variants]]\nname = "walls-dear"\nset = { "buildings.walls.cost" = 90 }\n'
    text = experiment_text(extra=extra).replace("chunk_size", 'skills = [0, 1]\nbaseline = '
                                                '"baseline"\nchunk_size')
    exp = load_experiment(write(tmp_path / "e.toml", text))
    ids = [v.id for v in exp.variants]
    assert ids == ["baseline.skill-0", "baseline.skill-1", "dominance-50.skill-0",
                   "dominance-50.skill-1", "walls-dear.skill-0", "walls-dear.skill-1"]
    assert exp.baseline == "baseline.skill-0"
    one = {v.id: v for v in exp.variants}["walls-dear.skill-1"]
    assert [e["skill"] for e in one.seat_ai] == [1, 1, 1, 1]
    assert one.overrides == {"buildings.walls.cost": 90}
    clash = text.replace(extra, extra + 'seat_ai = [{ skill = 1 }]\n')
    with pytest.raises(ExperimentError, match="sets a skill"):
        load_experiment(write(tmp_path / "c.toml", clash))


def _matches(arms: dict[str, list[str]]) -> pl.DataFrame:
    rows = [(name, f"{name}:{i}", i, 0, v, 100, 0) for name, vs in arms.items()
            for i, v in enumerate(vs)]
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                      "match_index": pl.Int64, "winner": pl.Int64,
                                      "victory": pl.Utf8, "end_turn": pl.Int64,
                                      "events_dropped": pl.Int64}, orient="row")


@pytest.mark.nojit
def test_a_change_that_matters_only_when_played_well_is_only_at_that_skill():
    """Planted: the change moves 60 of 300 conquests to the turn limit at skill 1 and
    nothing at skill 0; the interaction is exactly that, and its verdict says so. The
    same effect at both skills holds at both."""
    one = [{"skill": 1, "forbid": []}] * 4
    prov = {"variants": [{"id": i, "overrides": o, "seat_ai": s, "tables": {}}
                         for i, o, s in [("base", {}, []), ("walls", {"k": 1}, []),
                                         ("base-1", {}, one), ("walls-1", {"k": 1}, one)]]}
    n = 300
    base = ["conquest" if i % 2 else "science" for i in range(n)]
    moved = ["turn_limit" if v == "conquest" and i < 120 else v for i, v in enumerate(base)]
    planted = _matches({"base": base, "walls": base, "base-1": base, "walls-1": moved})
    effects = skill_effects(planted, prov, "base")
    wide = {r["metric"]: r for r in skill_interactions(planted, effects).to_dicts()}
    conquest = wide["victory=conquest"]
    assert conquest["verdict"] == "only at skill 1"
    assert conquest["interaction"] == pytest.approx(-60 / n)
    assert conquest["int_lo"] < -60 / n < conquest["int_hi"] < 0
    assert wide["victory=science"]["verdict"] == "holds at both"
    # the same move at both skills: a large effect, no interaction
    both = _matches({"base": base, "walls": moved, "base-1": base, "walls-1": moved})
    same = {r["metric"]: r for r in skill_interactions(
        both, skill_effects(both, prov, "base")).to_dicts()}
    assert same["victory=conquest"]["verdict"] == "holds at both"
    assert same["victory=conquest"]["changed_a"] and same["victory=conquest"]["changed_b"]
    # the report's other tests join the family: the correction is stricter, never looser
    alone = skill_interactions(planted, effects)
    joined = skill_interactions(planted, effects, family=[0.5] * 50)
    assert joined["p_holm"].drop_nulls().min() > alone["p_holm"].drop_nulls().min()
