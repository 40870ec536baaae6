"""Restricted play (issue 16): per-seat `seat_ai` settings, the rule functions'
refusal of a forbidden action, the AI planning around a forbid, and the analyses
that read restricted and graded-skill sweeps: what each strategy is worth
(sim.analysis.importance) and whether an effect survives a stronger player
(sim.analysis.robustness)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim.analysis.importance import baseline_use, strategy_importance
from sim.analysis.load import load_run
from sim.analysis.robustness import (
    skill_arms,
    skill_effects,
    skill_interactions,
    uniform_skill,
)
from sim.engine.commands import run_command
from sim.engine.match import new_match, outcome, play_match
from sim.engine.seat_ai import SeatAIError, check_seat_ai, seat_masks
from sim.report.html import build_report
from sim.rules import codes as R
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import experiment_text, write

# --- the seat_ai contract -------------------------------------------------------

@pytest.mark.nojit
def test_seat_ai_is_normalised_and_defaults_fill_the_other_seats(tables):
    got = check_seat_ai(tables, [{"forbid": ["rush", "observatory", "rush"]}, {"skill": 1}], 4)
    assert got == [{"skill": 0, "forbid": ["observatory", "rush"]},
                   {"skill": 1, "forbid": []}, {"skill": 0, "forbid": []},
                   {"skill": 0, "forbid": []}]


@pytest.mark.nojit
@pytest.mark.parametrize(("seat_ai", "needle"), [
    ([{"skil": 1}], "seat_ai[0].skil: unknown key"),
    ([{}, {"skill": 3}], "seat_ai[1].skill: 3"),
    ([{"skill": True}], "seat_ai[0].skill"),
    ([{"forbid": ["obsevatory"]}], "obsevatory"),
    ([{"forbid": ["research:alchemy"]}], "research:alchemy"),
    ([{}, {}, {}, {}, {}], "5 entries for 4 seats"),
])
def test_a_bad_seat_setting_names_its_seat_and_key(tables, seat_ai, needle):
    with pytest.raises(SeatAIError) as err:
        check_seat_ai(tables, seat_ai, 4)
    assert needle in str(err.value)


@pytest.mark.nojit
def test_an_experiment_with_a_bad_seat_ai_is_refused_by_file_and_key(tmp_path):
    extra = '\n[[variants]]\nname = "x"\nseat_ai = [{ forbid = ["catapults"] }]\n'
    path = write(tmp_path / "e.toml", experiment_text(extra=extra))
    with pytest.raises(ExperimentError) as err:
        load_experiment(path)
    assert "seat_ai" in str(err.value) and "catapults" in str(err.value)


# --- the rules refuse a forbidden action ----------------------------------------

def _restricted_opening(tables, forbid: list[str], seat: int = 0):
    st, board = new_match(tables, 5, 0, 4)
    settings = check_seat_ai(tables, [{} if s != seat else {"forbid": forbid}
                                      for s in range(4)], 4)
    for field, values in seat_masks(tables, settings).items():
        st[field][: len(values)] = values
    return st, board, tables.arrays()


@pytest.mark.nojit
def test_a_forbidden_item_tech_and_truce_are_refused_with_the_reason(tables):
    """RULES issue 16: an attempt through a rule function is refused as 'forbidden';
    the same commands are accepted for a seat not restricted."""
    warrior = tables.unit_names.index("warrior")
    forbid = ["warrior", "truce", f"research:{tables.tech_names[0]}"]
    st, board, tb = _restricted_opening(tables, forbid)
    assert int(st.active_seat[0]) == 0
    capital = int(st.seat_capital[0])
    assert run_command(st, tb, board, R.C_QUEUE, capital, warrior) == R.R_FORBIDDEN
    assert run_command(st, tb, board, R.C_RESEARCH, 0, 0) == R.R_FORBIDDEN
    assert run_command(st, tb, board, R.C_TRUCE, 1, 0) == R.R_FORBIDDEN
    # the unrestricted seat 1 may queue a warrior, and may not buy a truce with seat 0
    st1, board1, tb1 = _restricted_opening(tables, forbid)
    assert run_command(st1, tb1, board1, R.C_SET_SEAT, 1, 0) == R.OK
    assert run_command(st1, tb1, board1, R.C_QUEUE, int(st1.seat_capital[1]),
                       warrior) == R.OK
    assert run_command(st1, tb1, board1, R.C_TRUCE, 0, 0) == R.R_FORBIDDEN


def _outcome(tables, m: int, seat_ai=None) -> dict:
    st, board, log = play_match(tables, 3, m, 4, seat_ai=seat_ai)
    return outcome(st, tables, board, log, 3, m)


def test_a_seat_forbidden_the_observatory_never_completes_one(tables):
    """The AI plans around a forbid: over the same matches the free seat 0 completes
    Observatories (so the test can fail) and the restricted one never does, nor wins
    by science (V16)."""
    free_done = held_done = held_science = 0
    for m in range(12):
        free = _outcome(tables, m)
        held = _outcome(tables, m, [{"forbid": ["observatory"]}])
        free_done += free["seats"][0]["observatory_completed_turn"] is not None
        held_done += held["seats"][0]["observatory_completed_turn"] is not None
        held_science += held["winner"] == 0 and held["victory"] == "science"
        assert held["seats"][0]["forbid"] == "observatory"
        assert not any(e["kind"] == "observatory_queued" and e.get("seat") == 0
                       for e in held["events"])
    assert free_done > 0
    assert held_done == 0 and held_science == 0


# --- what each strategy is worth ------------------------------------------------

def _frames(outcomes: dict[str, list[tuple[int | None, str]]], forbid: dict[str, str]):
    """outcomes[variant] = per match index (winning seat, victory); 4 seats; seat 0 of
    each variant in `forbid` carries that forbid."""
    m_rows, s_rows = [], []
    for variant, rows in outcomes.items():
        for i, (winner, victory) in enumerate(rows):
            m_rows.append((variant, f"{variant}:{i}", i, winner, victory, 100, 0))
            for s in range(4):
                s_rows.append((variant, f"{variant}:{i}", i, s, winner == s,
                               forbid.get(variant, "") if s == 0 else ""))
    matches = pl.DataFrame(m_rows, schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                           "match_index": pl.Int64, "winner": pl.Int64,
                                           "victory": pl.Utf8, "end_turn": pl.Int64,
                                           "events_dropped": pl.Int64}, orient="row")
    seats = pl.DataFrame(s_rows, schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                         "match_index": pl.Int64, "seat": pl.Int64,
                                         "winner": pl.Boolean, "forbid": pl.Utf8},
                         orient="row")
    return matches, seats


@pytest.mark.nojit
def test_importance_pairs_the_seat_by_match_and_gives_each_verdict():
    n = 200
    base = [(0, "science") if i % 4 == 0 else (1 + i % 3, "conquest") for i in range(n)]
    # seat 0's 50 science wins go to seat 1 without the Observatory: a clear cost
    no_obs = [(1, "conquest") if w == 0 else (w, v) for w, v in base]
    matches, seats = _frames({"baseline": base, "no-obs": no_obs, "no-divan": list(base)},
                             {"no-obs": "observatory", "no-divan": "divan"})
    table = strategy_importance(matches, seats, "baseline")
    win = {r["variant"]: r for r in table.filter(pl.col("outcome") == "win").to_dicts()}
    assert win["no-obs"]["difference"] == pytest.approx(-0.25)
    assert win["no-obs"]["discordant_loss"] == 50 and win["no-obs"]["discordant_gain"] == 0
    assert win["no-obs"]["verdict"] == "costs" and win["no-obs"]["p_holm"] < 1e-10
    assert win["no-divan"]["difference"] == 0 and win["no-divan"]["verdict"] == "nothing"
    sci = table.filter((pl.col("variant") == "no-obs") & (pl.col("outcome") == "win=science"))
    assert sci.item(0, "baseline_value") == pytest.approx(0.25)
    assert sci.item(0, "variant_value") == 0
    # the largest loss ranks first
    assert table.item(0, "variant") == "no-obs"


@pytest.mark.nojit
def test_importance_is_undecided_on_too_few_matches_and_ignores_unpaired_ones():
    base = [(0, "conquest"), (1, "conquest"), (0, "science"), (2, "dominance")]
    held = [(1, "conquest"), (1, "conquest"), (2, "science"), (2, "dominance"), (0, "science")]
    matches, seats = _frames({"baseline": base, "v": held}, {"v": "rush"})
    row = strategy_importance(matches, seats, "baseline").filter(
        pl.col("outcome") == "win").to_dicts()[0]
    assert row["n_pairs"] == 4  # match 4 of v has no baseline partner
    assert row["difference"] == pytest.approx(-0.5)
    assert row["verdict"] == "undecided"


@pytest.mark.nojit
def test_a_restriction_on_other_tables_is_paired_with_its_free_twin():
    base = [(0, "conquest"), (1, "science")] * 300
    twin = [(1, "conquest"), (1, "science")] * 300  # other tables: seat 0 never wins
    matches, seats = _frames({"baseline": base, "priced": twin, "priced-held": list(twin)},
                             {"priced-held": "monument"})
    prov = {"variants": [{"id": "baseline", "overrides": {}},
                         {"id": "priced", "overrides": {"b.monument.cost": 9}},
                         {"id": "priced-held", "overrides": {"b.monument.cost": 9},
                          "seat_ai": [{"skill": 0, "forbid": ["monument"]}]}]}
    row = strategy_importance(matches, seats, "baseline", provenance=prov).filter(
        pl.col("outcome") == "win").to_dicts()[0]
    assert row["twin"] == "priced" and row["difference"] == 0 and row["verdict"] == "nothing"
    # without provenance the baseline is the only twin there is: a spurious cost
    naive = strategy_importance(matches, seats, "baseline").filter(
        pl.col("outcome") == "win").to_dicts()[0]
    assert naive["twin"] == "baseline" and naive["verdict"] == "costs"
    # with provenance, a restriction on tables no free variant plays has no twin
    prov["variants"] = [v for v in prov["variants"] if v["id"] != "priced"]
    assert strategy_importance(matches, seats, "baseline", provenance=prov).height == 0


@pytest.mark.nojit
def test_no_restricted_seat_gives_no_rows():
    matches, seats = _frames({"baseline": [(0, "conquest")], "v": [(1, "science")]}, {})
    assert strategy_importance(matches, seats, "baseline").height == 0


# --- skill robustness -----------------------------------------------------------

def _prov(variants: list[tuple[str, dict, list]]) -> dict:
    return {"variants": [{"id": i, "overrides": o, "seat_ai": s, "tables": {}}
                         for i, o, s in variants]}


@pytest.mark.nojit
def test_uniform_skill_reads_every_seat_and_leaves_out_mixed_or_forbidding_variants():
    assert uniform_skill({"seat_ai": []}) == 0
    assert uniform_skill({"seat_ai": [{"skill": 1, "forbid": []}] * 4}) == 1
    assert uniform_skill({"seat_ai": [{"skill": 1}, {"skill": 0}]}) is None
    assert uniform_skill({"seat_ai": [{"skill": 0, "forbid": ["rush"]}]}) is None


@pytest.mark.nojit
def test_an_effect_that_flips_with_skill_is_flagged_and_a_steady_one_holds_at_both():
    one = [{"skill": 1, "forbid": []}] * 4
    prov = _prov([("base", {}, []), ("cheap", {"k": 1}, []),
                  ("base-1", {}, one), ("cheap-1", {"k": 1}, one)])
    arms = skill_arms(prov, "base")
    assert arms.select("variant", "skill", "base").rows() == [("cheap", 0, "base"),
                                                             ("cheap-1", 1, "base-1")]
    n = 300
    base = [("conquest" if i % 2 else "dominance") for i in range(n)]
    # skill 0: 60 dominance wins become science; skill 1: 60 science wins (of the
    # stronger players' baseline) become dominance; conquest never moves
    base1 = [("conquest" if i % 2 else ("science" if i % 4 == 0 else "dominance"))
             for i in range(n)]
    cheap = [("science" if v == "dominance" and i < 120 else v) for i, v in enumerate(base)]
    cheap1 = [("dominance" if v == "science" and i < 240 else v) for i, v in enumerate(base1)]
    rows = [(name, f"{name}:{i}", i, 0 if v != "turn_limit" else None, v, 100, 0)
            for name, vs in (("base", base), ("cheap", cheap), ("base-1", base1),
                             ("cheap-1", cheap1)) for i, v in enumerate(vs)]
    matches = pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_id": pl.Utf8,
                                         "match_index": pl.Int64, "winner": pl.Int64,
                                         "victory": pl.Utf8, "end_turn": pl.Int64,
                                         "events_dropped": pl.Int64}, orient="row")
    effects = skill_effects(matches, prov, "base")
    assert set(effects.get_column("skill").to_list()) == {0, 1}
    wide = {r["metric"]: r for r in skill_interactions(matches, effects).to_dicts()}
    science = wide["victory=science"]
    assert science["verdict"] == "flips sign"
    assert science["difference_a"] > 0 > science["difference_b"]
    # the interaction is the effect at skill 1 minus the one at skill 0, per match
    assert science["interaction"] == pytest.approx(science["difference_b"]
                                                   - science["difference_a"])
    assert science["int_hi"] < 0 and science["p_holm"] < 0.05
    assert wide["victory=conquest"]["verdict"] == "holds at both"
    assert wide["victory=conquest"]["p_value"] is None  # no match's contrast moved


# --- end to end: a small restricted and graded-skill sweep, and its report ------

def test_a_small_restricted_sweep_reports_what_each_strategy_is_worth(tmp_path):
    extra = """
[[variants]]
name = "no-city-attacks"
seat_ai = [{ forbid = ["attack_cities"] }, {}, {}, {}]

[[variants]]
name = "no-divan"
seat_ai = [{ forbid = ["divan"] }, {}, {}, {}]

[[variants]]
name = "skill-1"
seat_ai = [{ skill = 1 }, { skill = 1 }, { skill = 1 }, { skill = 1 }]

[[variants]]
name = "dominance-50-skill-1"
set = { "dominance.share_pct" = 50 }
seat_ai = [{ skill = 1 }, { skill = 1 }, { skill = 1 }, { skill = 1 }]
"""
    exp = load_experiment(write(tmp_path / "e.toml", experiment_text(matches=16, chunk_size=8,
                                                                     extra=extra)))
    run_sweep(exp, tmp_path / "run", progress=False)
    run = load_run(tmp_path / "run")
    seats = run.seats.filter(pl.col("variant") == "no-city-attacks")
    assert set(seats.filter(pl.col("seat") == 0).get_column("forbid")) == {"attack_cities"}
    assert set(seats.filter(pl.col("seat") == 1).get_column("forbid")) == {""}
    skill = run.seats.filter(pl.col("variant") == "skill-1").get_column("skill")
    assert set(skill.to_list()) == {1}
    table = strategy_importance(run.matches, run.seats, "baseline")
    assert set(table.get_column("variant")) == {"no-city-attacks", "no-divan"}
    assert table.filter(pl.col("outcome") == "win").height == 2
    use = baseline_use(run.matches, run.events, run.seats, "baseline")

    def uses(variant: str, expr: pl.Expr) -> int:
        rows = run.events.filter((pl.col("variant") == variant) & (pl.col("seat") == 0) & expr)
        return rows.get_column("match_index").n_unique()

    divan = (pl.col("kind") == "built") & (pl.col("detail") == "divan")
    # the fixture's AI builds the Divan; restricted, seat 0 never does
    assert use.filter(pl.col("item") == "divan").item(0, "used") == uses("baseline", divan) > 0
    assert uses("no-divan", divan) == 0
    attacks = use.filter(pl.col("item") == "attack_cities").item(0, "used")
    city_attack = (pl.col("kind") == "attack") & pl.col("city").is_not_null()
    assert attacks == uses("baseline", city_attack)
    assert uses("no-city-attacks", city_attack) == 0
    effects = skill_effects(run.matches, run.provenance, "baseline")
    assert set(effects.get_column("skill")) == {0, 1}
    wide = skill_interactions(run.matches, effects)
    changes = set(wide.get_column("change"))
    assert len(changes) == 1 and next(iter(changes)).startswith("dominance.share_pct")
    assert wide.height == 4  # one row per victory type of V01, at both skills
    page = build_report(tmp_path / "run")
    assert "What each strategy is worth" in page
    assert "Effects by AI skill" in page and "holds at both" in page
    assert np.isfinite(table.get_column("difference").to_numpy()).all()


@pytest.mark.nojit
def test_a_dose_curve_leaves_out_variants_with_seat_settings():
    """A graded-skill copy of a grid point plays another game: it is no second point
    at the same value (which divided by a zero step)."""
    from sim.analysis.dose import curves_of

    one = [{"skill": 1, "forbid": []}] * 4
    prov = {"baseline": "b", "variants": [
        {"id": "b", "overrides": {}, "tables": {"k": 2}},
        {"id": "k1", "overrides": {"k": 1}}, {"id": "k3", "overrides": {"k": 3}},
        {"id": "k3-skill", "overrides": {"k": 3}, "seat_ai": one},
        {"id": "k1-again", "overrides": {"k": 1}}]}
    assert curves_of(prov) == {"k": [(1, "k1"), (2, "b"), (3, "k3")]}
