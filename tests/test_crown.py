"""Crown, the second game (../shared/RULES-crown.md): the kernels against the page's
worked examples, hand cases named by rule, the plain reference (tests/reference/crown.py)
on random tables, seeds and skills, the tables' errors, side fairness and the AI levels.
Tests read the frozen tables tests/fixtures/crown.toml."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from sim.engine.crown import crown_stream, play_crown_match, start_board
from sim.kernels.crown import (
    attack_total,
    crown_of,
    decide,
    defence_total,
    lead_of,
    order_on,
    resolve_attack,
    side_score,
    wave_order,
)
from sim.rules.crown import (
    ATTACK,
    BY_MAJORITIES,
    BY_POINTS,
    BY_ZONES,
    CLAIM,
    DEFENDER,
    DRAW,
    EMPTY,
    EV_ERUPTION,
    EV_FAULT,
    MAX_PLAYERS,
    N_RESULT_FIELDS,
    N_SCORE_TERMS,
    NO_WINNER,
    PASS,
    PRODUCER,
    REINFORCE,
    RS_DECIDED_BY,
    RS_WINNER,
    SCORE_TERMS,
    SIDE_A,
    SIDE_B,
    TERM_CAPTURE,
    TERM_JOINED,
    TERM_MAJORITIES,
    TERM_ZONES,
    WIDGETS,
    WILDCARD,
    WORK_SIZE,
    fault_round,
    load_crown_tables,
)
from sim.rules.tables import TablesError
from tests.conftest import TESTS
from tests.reference import crown as ref

FIXTURE = TESTS / "fixtures" / "crown.toml"


@pytest.fixture(scope="module")
def tables():
    return load_crown_tables(FIXTURE)


def _board(tables, held: dict[str, tuple[int, int]]):
    """(owner, tokens) with zones by name -> (side, tokens), every other zone empty."""
    owner, tokens = start_board(tables)
    owner[:], tokens[:] = EMPTY, 0
    names = tables.zone_names
    for name, (side, n) in held.items():
        owner[names.index(name)], tokens[names.index(name)] = side, n
    return owner, tokens


# ---------------------------------------------------------------- the page's examples
@pytest.mark.nojit
def test_k02_k03_wildcard_on_face_8_leads_as_a_defender_with_a_crown_of_8(tables):
    """The page's first example (K02, K03, L2): face 8's Wildcard touches a Booster
    (face 2), Defenders (3, 9), a Producer (1) and an Attacker (6): it leads as a
    Defender, 2 × 2 + 2 + 1 + 1 = 8; the reference reads it the same way."""
    rec = tables.record
    assert rec.face_widget[7] == WILDCARD
    assert lead_of(rec, np.int64(7)) == DEFENDER
    assert crown_of(rec, np.int64(7)) == 8
    assert ref.lead_and_crown(tables.model, 8) == ("defender", 8)


@pytest.mark.nojit
def test_k07_k08_k09_an_attack_of_12_against_a_defence_of_7_takes_the_zone(tables):
    """The page's second example: a Wildcard leading as a Defender with a Crown of 8,
    one teammate already in the region (+2 Surge, K07), two capture points held (+2),
    no cycle bonus (Producer beats Defender): 12. The defence: a Producer's Crown of 4
    and 3 tokens, no Defender bonus (K08): 7. 12 beats 7: the zone is taken, the
    defender's tokens go and 1 of the attacker's is placed (K09)."""
    rec = tables.record
    attack = attack_total(rec, np.int64(8), np.int64(DEFENDER), np.int64(1),
                          np.int64(PRODUCER), np.int64(2))
    defence = defence_total(rec, np.int64(4), np.int64(PRODUCER), np.int64(3))
    assert (attack, defence) == (12, 7)
    owner, tokens = _board(tables, {"W3": (SIDE_A, 1), "C3": (SIDE_A, 1), "C2": (SIDE_B, 3)})
    c2 = tables.zone_names.index("C2")
    assert resolve_attack(rec, owner, tokens, np.int64(SIDE_A), np.int64(c2), attack, defence)
    assert (owner[c2], tokens[c2]) == (SIDE_A, 1)


# ---------------------------------------------------------------- hand cases by rule
@pytest.mark.nojit
def test_k02_every_face_matches_the_reference_and_powers_are_read_doubled(tables):
    """K02, L2: each face's Crown and lead equal the reference's; an Attacker face
    touching no Booster and no Attacker scores exactly its power × 2 = 6."""
    rec = tables.record
    for face in range(1, 13):
        lead, crown = ref.lead_and_crown(tables.model, face)
        assert (WIDGETS[lead_of(rec, np.int64(face - 1))], crown_of(rec, np.int64(face - 1))) \
            == (lead, crown), face
    # face 4 (Attacker) touches 1 P, 5 W, 6 A, 10 D, 11 P: 3 × 2 + 1 (face 6)
    assert crown_of(rec, np.int64(3)) == 7


@pytest.mark.nojit
def test_l3_a_tied_wildcard_takes_the_first_type_and_one_touching_none_stays_a_wildcard(
        tables):
    """K03, L3: face 8 (touching faces 1 P, 2 B, 3 D, 6 A, 9 D) with face 3 made an
    Attacker leads as an Attacker (2 against 1); with face 3 a Booster it ties three
    ways and takes the first of crown.wildcard.becomes; a Wildcard whose neighbours are
    all Boosters stays a Wildcard and gets no +1 (K02)."""
    # face 8 touches 1 2 3 6 9: make 3 an Attacker and 9 a Defender -> A 2 (3, 6), D 1
    t = tables.with_overrides({"core.faces.2": "attacker"})
    assert lead_of(t.record, np.int64(7)) == WIDGETS.index("attacker")
    # A 1 (6) and D 1 (9) and P 1 (1): a three-way tie -> the first of becomes
    t = tables.with_overrides({"core.faces.2": "booster"})
    assert lead_of(t.record, np.int64(7)) == WIDGETS.index("attacker")
    t = tables.with_overrides({"core.faces.2": "booster",
                               "crown.wildcard.becomes": ["producer", "defender", "attacker"]})
    assert lead_of(t.record, np.int64(7)) == PRODUCER
    alone = tables.with_overrides({f"core.faces.{f - 1}": "booster" for f in (1, 2, 3, 6, 9)})
    assert lead_of(alone.record, np.int64(7)) == WILDCARD
    assert crown_of(alone.record, np.int64(7)) == 2 * 2 + 5 * 2  # power, 5 Boosters
    assert ref.lead_and_crown(alone.model, 8) == ("wildcard", 14)


@pytest.mark.nojit
def test_k05_players_act_strongest_crown_first_ties_by_a_keyed_draw(tables):
    """K05: the order sorts by Crown, strongest first; equal Crowns come in an order the
    stream draws, the same for the same stream and wave."""
    crown = np.array([5, 9, 5, 7, 5, 1, 0, 0], dtype=np.int64)
    order = np.zeros(MAX_PLAYERS, dtype=np.int64)
    stream = crown_stream(3, 0)
    tie = np.zeros(MAX_PLAYERS, dtype=np.uint64)
    wave_order(stream, np.int64(4), crown, np.int64(6), order, tie)
    got = list(order[:6])
    assert got[:2] == [1, 3] and sorted(got[2:5]) == [0, 2, 4] and got[5] == 5
    again = np.zeros(MAX_PLAYERS, dtype=np.int64)
    wave_order(stream, np.int64(4), crown, np.int64(6), again, tie)
    assert list(again) == list(order)
    orders = set()
    for turn in range(40):
        wave_order(stream, np.int64(turn), crown, np.int64(6), order, tie)
        orders.add(tuple(order[2:5]))
    assert len(orders) > 1  # the ties are drawn, not by index


@pytest.mark.nojit
def test_k06_claim_reinforce_attack_only_next_to_land_and_home_without_land(tables):
    """K06: claim an empty zone touching the side's land, reinforce its own below the
    cap, attack an enemy zone touching its land; a side with no land may claim its own
    empty home zone only."""
    rec = tables.record
    names = tables.zone_names
    owner, tokens = _board(tables, {"W1": (SIDE_A, 3), "W2": (SIDE_A, 1), "C2": (SIDE_B, 2)})

    def on(name, side=SIDE_A, landed=True):
        return order_on(rec, owner, tokens, np.int64(side), np.int64(names.index(name)), landed)

    assert on("W3") == CLAIM and on("C1") == CLAIM and on("W4") == PASS
    assert on("W2") == REINFORCE and on("W1") == PASS  # W1 holds max_tokens = 3
    assert on("C2") == ATTACK and on("C3") == PASS
    owner, tokens = _board(tables, {"C3": (SIDE_A, 1)})
    assert on("E5", SIDE_B, landed=False) == CLAIM
    assert on("E4", SIDE_B, landed=False) == PASS and on("W1", SIDE_B, landed=False) == PASS


@pytest.mark.nojit
def test_k10_a_round_score_counts_zones_capture_points_majorities_and_a_joined_area(tables):
    """K10: A holds W1–W3 and C1–C3 (W3 and C3 capture points, 3 + 5; majorities in West
    and Centre; joined, but across 2 regions: no +2); B holds E3 alone."""
    rec = tables.record
    held = {z: (SIDE_A, 1) for z in ("W1", "W2", "W3", "C1", "C2", "C3")}
    owner, tokens = _board(tables, {**held, "E3": (SIDE_B, 2)})
    terms = np.zeros(N_SCORE_TERMS, dtype=np.int64)
    work = np.zeros(WORK_SIZE, dtype=np.int64)
    assert side_score(rec, owner, np.int64(SIDE_A), terms, work) == 6 + 8 + 6
    assert (terms[TERM_ZONES], terms[TERM_CAPTURE], terms[TERM_MAJORITIES],
            terms[TERM_JOINED]) == (6, 8, 6, 0)
    assert side_score(rec, owner, np.int64(SIDE_B), terms, work) == 1 + 3
    # E1 joined to C1: one area over 3 regions, +2
    owner[tables.zone_names.index("E1")] = SIDE_A
    assert side_score(rec, owner, np.int64(SIDE_A), terms, work) == 7 + 8 + 6 + 2
    ref_board = ref.Board({n: ("AB"[owner[i]] if owner[i] != EMPTY else None)
                           for i, n in enumerate(tables.zone_names)},
                          {n: int(tokens[i]) for i, n in enumerate(tables.zone_names)})
    assert sum(ref.score(tables.model, ref_board, "A").values()) == 23


@pytest.mark.nojit
def test_k13_most_points_then_zones_then_majorities_then_a_draw():
    """K13: each tie-break in turn, and a draw when all three are level."""
    result = np.zeros(N_RESULT_FIELDS, dtype=np.int64)
    cases = [((10, 9), (1, 5), (0, 2), SIDE_A, BY_POINTS),
             ((10, 10), (4, 5), (2, 0), SIDE_B, BY_ZONES),
             ((10, 10), (5, 5), (1, 0), SIDE_A, BY_MAJORITIES),
             ((10, 10), (5, 5), (1, 1), NO_WINNER, DRAW)]
    for totals, zones, majorities, winner, how in cases:
        decide(np.array(totals), np.array(zones), np.array(majorities), result)
        assert (result[RS_WINNER], result[RS_DECIDED_BY]) == (winner, how)


@pytest.mark.nojit
def test_k11_k12_l6_the_fault_after_round_5_and_the_eruption_before_the_doubled_last(tables):
    """K11, K12, L6: over a 10-round match the fault opens after round ceil(10/2) = 5
    (round index 4) and the eruption in the last round; each takes 1 token off every
    held fault zone; the last round's points count twice (K11)."""
    assert fault_round(10, 50) == 5 and fault_round(7, 50) == 4 and fault_round(10, 0) == 0
    out = play_crown_match(tables, 11, 3)
    kinds = out.events[:, 0]
    rounds = out.events[:, 1]
    assert set(rounds[kinds == EV_FAULT]) <= {4} and set(rounds[kinds == EV_ERUPTION]) <= {9}
    assert (out.events[kinds == EV_FAULT, 5] == 1).all()
    last = out.rounds[-1]
    assert last[2] - out.rounds[-2][2] == last[0]  # A's total grew by the row's points
    assert out.terms[:, SCORE_TERMS.index("last_round_extra")].sum() * 2 == last[:2].sum()


# ---------------------------------------------------------------- kernel = reference
_tables_cache: dict = {}


def _variant(overrides: tuple):
    """The fixture tables with `overrides` ((key, value) pairs, lists as tuples), each
    variant validated once."""
    if overrides not in _tables_cache:
        base = load_crown_tables(FIXTURE)
        _tables_cache[overrides] = base.with_overrides(
            {k: list(v) if isinstance(v, tuple) else v for k, v in overrides})
    return _tables_cache[overrides]


@st.composite
def variants(draw):
    """Random tables: team sizes, rounds, waves, a face's widget, bonuses, values."""
    out = {"match.team_sizes": [draw(st.integers(1, 4)), draw(st.integers(1, 4))],
           "match.rounds": draw(st.integers(1, 6)), "match.waves": draw(st.integers(1, 3))}
    for _ in range(draw(st.integers(0, 2))):
        out[f"core.faces.{draw(st.integers(0, 11))}"] = draw(st.sampled_from(WIDGETS))
    for key, top in (("attack.surge_bonus", 5), ("attack.cycle_bonus", 6),
                     ("defence.token_bonus", 3), ("scoring.majority_zones", 5),
                     ("fault.open_at_pct", 100), ("map.capture.C3", 9), ("ai.threat_pct", 300)):
        if draw(st.booleans()):
            low = 1 if key in ("scoring.majority_zones", "map.capture.C3") else 0
            out[key] = draw(st.integers(low, top))
    if draw(st.booleans()):
        out["crown.wildcard.touching_wildcard_counts"] = True
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in out.items()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overrides=variants(), seed=st.integers(0, 2**32), match=st.integers(0, 1000),
       skills=st.tuples(st.integers(0, 1), st.integers(0, 1)))
@pytest.mark.nojit
def test_k01_k14_the_compiled_match_plays_the_reference_event_for_event(overrides, seed,
                                                                        match, skills):
    """K01–K14, L1–L7: on random tables, seeds and skills the compiled match writes the
    reference's events (every roll, order, attack total, fault and round score), its
    totals, terms by term, winner and how it was decided."""
    _same_as_reference(overrides, seed, match, skills)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overrides=variants(), seed=st.integers(0, 2**32), match=st.integers(0, 1000),
       skills=st.tuples(st.integers(0, 1), st.integers(0, 1)))
def test_k01_k14_the_reference_property_at_length(overrides, seed, match, skills):
    """The same property over 400 examples (`pytest -m slow`)."""
    _same_as_reference(overrides, seed, match, skills)


def _same_as_reference(overrides: tuple, seed: int, match: int, skills: tuple) -> None:
    t = _variant(overrides)
    out = play_crown_match(t, seed, match, skills)
    want = ref.play(t.model, int(crown_stream(seed, match)), skills)
    assert [tuple(int(x) for x in row) for row in out.events] == want.events
    assert list(out.totals) == [want.totals["A"], want.totals["B"]]
    for i, side in enumerate("AB"):
        assert list(out.terms[i]) == [want.terms[side][k] for k in SCORE_TERMS]
    assert out.winner == (NO_WINNER if want.winner is None else "AB".index(want.winner))
    assert out.decided_by == ["points", "zones", "majorities", "draw"].index(want.decided_by)
    assert out.fault_leader == (EMPTY if want.fault_leader is None
                                else "AB".index(want.fault_leader))


# ---------------------------------------------------------------- tables
@pytest.mark.nojit
def test_tables_errors_say_file_line_key_reason(tmp_path):
    """A broken Crown table is refused with every problem as `file:line: key: reason`:
    a widget that is not one, a face touching its opposite, an unknown region, a zone
    touching one that does not touch it back, a team too large."""
    text = FIXTURE.read_text()
    text = text.replace('faces = ["producer"', 'faces = ["sorcerer"')
    text = text.replace('W1 = { region = "West"', 'W1 = { region = "North"')
    text = text.replace('W5 = { region = "West", touches = ["W4", "C5"] }',
                        'W5 = { region = "West", touches = ["W4", "C5", "E1"] }')
    text = text.replace("team_sizes = [3, 3]", "team_sizes = [3, 5]")
    path = tmp_path / "crown.toml"
    path.write_text(text)
    lines = text.splitlines()

    def line(prefix: str) -> int:
        return next(i for i, raw in enumerate(lines, 1) if raw.strip().startswith(prefix))

    with pytest.raises(TablesError) as err:
        load_crown_tables(path)
    assert err.value.errors == [
        f"{path}:{line('faces =')}: core.faces.0: input should be 'attacker', 'defender', "
        "'producer', 'wildcard' or 'booster' (got 'sorcerer')",
        f"{path}:{line('team_sizes')}: match.team_sizes.1: input should be less than or "
        "equal to 4 (got 5)",
    ]
    path.write_text(text.replace('"sorcerer"', '"producer"').replace("[3, 5]", "[3, 3]")
                    .replace("[1, 7, 8, 9, 10],   # 2", "[1, 7, 8, 9, 12],   # 2"))
    with pytest.raises(TablesError) as err:
        load_crown_tables(path)
    touches = line("[1, 7, 8, 9, 10]") - 2  # the touches key's own line
    assert err.value.errors == [
        f"{path}:{touches}: core.touches.1.4: face 2 touches 12 but face 12 does not "
        "touch 2",
        f"{path}:{touches}: core.touches.9.1: face 10 touches 2 but face 2 does not "
        "touch 10",
        f"{path}:{line('W1 =')}: map.zones.W1.region: unknown region 'North'; regions "
        "are ['West', 'Centre', 'East']",
        f"{path}:{line('W5 =')}: map.zones.W5.touches.2: W5 touches E1 but E1 does not "
        "touch W5",
    ]


@pytest.mark.nojit
def test_overrides_reach_list_positions_and_refuse_positions_past_the_end(tables):
    """`core.faces.7=booster` sets face 8 (positions count from 0); a position past the
    list's end and an unknown key are refused with the key named."""
    t = tables.with_overrides({"core.faces.7": "booster"})
    assert t.record.face_widget[7] == WIDGETS.index("booster") and t.hash != tables.hash
    assert list(t.record.face_widget[:7]) == list(tables.record.face_widget[:7])
    with pytest.raises(TablesError) as err:
        tables.with_overrides({"core.faces.12": "booster", "core.face.1": "booster"})
    assert err.value.errors == [
        f"{FIXTURE}: core.faces.12: 'core.faces.12' is not a position of a list of 12 "
        "(0 to 11)",
        f"{FIXTURE}: core.face.1: unknown key 'core.face' in the tables"]


# ---------------------------------------------------------------- fairness and skill
@pytest.mark.parametrize("sizes", [[3, 3], [2, 2]])
def test_l4_mirrored_teams_win_alike(tables, sizes):
    """L4: on the point-symmetric map with equal teams and equal skill neither side wins
    more often than chance allows (two-sided binomial test over the decided matches,
    p > 0.001)."""
    t = tables.with_overrides({"match.team_sizes": sizes})
    winners = [play_crown_match(t, 2026, i).winner for i in range(400)]
    a, b = winners.count(SIDE_A), winners.count(SIDE_B)
    assert binomtest(a, a + b).pvalue > 0.001, (a, b)


def test_k14_skill_1_beats_skill_0_on_either_side(tables):
    """K14: a side at skill 1 (teammates' Surge, the next wave) beats the same side at
    skill 0 more than half the time, as side A and as side B (one-sided binomial test,
    p < 0.001 over 300 matches each)."""
    for skills, side in (((1, 0), SIDE_A), ((0, 1), SIDE_B)):
        winners = [play_crown_match(tables, 77, i, skills).winner for i in range(300)]
        wins = winners.count(side)
        decided = wins + winners.count(1 - side)
        assert binomtest(wins, decided, alternative="greater").pvalue < 0.001, (skills, wins)


def test_bench_match_game_crown_prints_its_figures_as_json():
    """`sim bench match --game crown --json` times Crown matches at the default tables'
    10 rounds x 3 waves x 6 players and prints matches per second per core."""
    import json

    from typer.testing import CliRunner

    from sim.cli import app

    done = CliRunner().invoke(app, ["bench", "match", "--game", "crown", "--matches", "30",
                                    "--json"])
    assert done.exit_code == 0, done.output
    figures = json.loads(done.output)
    assert (figures["game"], figures["rounds"], figures["waves"], figures["players"]) == \
        ("crown", 10, 3, 6)
    assert figures["matches_per_s_core"] > 0
    bad = CliRunner().invoke(app, ["bench", "match", "--game", "chess"])
    assert bad.exit_code != 0 and "hex or crown" in bad.output


# ---------------------------------------------------------------- scenarios
SCENARIO_DIR = TESTS / "scenarios" / "crown"


def _scenario(tmp_path, body: str):
    path = tmp_path / "scn.toml"
    path.write_text(body)
    return path


def _run_scenario(path, *extra):
    import json

    from typer.testing import CliRunner

    from sim.cli import app

    done = CliRunner().invoke(app, ["scenario", "--game", "crown", str(path), "--json",
                                    *extra])
    return done.exit_code, (json.loads(done.stdout) if done.exit_code == 0 else done.output)


@pytest.mark.nojit
def test_k07_k09_scenario_the_page_attack_takes_the_zone_and_a_second_order_is_refused():
    """K04, K07–K09 through `sim scenario --game crown`: the page's 12 against 7 takes
    C2 (1 token of side A), and the same player's second order of the wave is refused.
    L5: the side's Surge in the Centre counts the orders that acted there (the
    teammate's reinforce and the attack), not the refused one."""
    code, report = _run_scenario(SCENARIO_DIR / "k07_attack_12_takes_defence_7.toml")
    assert code == 0
    attack = report["commands"][1]
    assert (attack["ok"], attack["attack"], attack["defence"], attack["won"]) == \
        (True, 12, 7, True)
    assert report["commands"][2] == {"index": 2, "do": "attack", "ok": False,
                                     "error": "player 0 has already acted this wave"}
    c2 = next(z for z in report["zones"] if z["zone"] == "C2")
    assert (c2["side"], c2["tokens"]) == ("A", 1)
    assert report["sides"][0]["surge"]["Centre"] == 2  # player 1's reinforce, the attack


@pytest.mark.nojit
def test_k06_scenario_refusals_leave_the_position_as_it_was(tmp_path):
    """K06: a reinforce on a full zone, an attack on a zone not touching the side's land
    and a claim of a held zone are refused with the page's reason; nothing changes."""
    path = _scenario(tmp_path, """
[[zones]]
zone = "W1"
side = "A"
tokens = 3
[[zones]]
zone = "E3"
side = "B"
[[commands]]
do = "reinforce"
player = 0
zone = "W1"
[[commands]]
do = "attack"
player = 1
zone = "E3"
[[commands]]
do = "claim"
player = 2
zone = "W1"
""")
    code, report = _run_scenario(path)
    assert code == 0
    assert [c["error"] for c in report["commands"]] == [
        "reinforce W1: it holds 3 tokens already", "attack E3: not next to your side's land",
        "claim W1: the zone is not empty"]
    held = {z["zone"]: (z["side"], z["tokens"]) for z in report["zones"] if z["side"]}
    assert held == {"W1": ("A", 3), "E3": ("B", 1)}
    assert not any(p["acted"] for p in report["players"])


@pytest.mark.nojit
def test_k14_l6_k10_scenario_ai_claims_the_capture_point_then_fault_and_scoring(tmp_path):
    """K14: from W2, skill 0 claims W3 (a capture point: +1 + 3) over W1 or C2 (+1);
    L6: the fault then takes C3's only token; K10: the round's score is added."""
    path = _scenario(tmp_path, """
totals = [10, 4]
[[zones]]
zone = "W2"
side = "A"
[[zones]]
zone = "C3"
side = "B"
[[commands]]
do = "ai"
player = 0
[[commands]]
do = "fault"
[[commands]]
do = "score_round"
""")
    code, report = _run_scenario(path)
    assert code == 0
    assert report["commands"][0]["order"] == "claim" and report["commands"][0]["zone"] == "W3"
    assert {"kind": "fault", "round": 1, "zone": "C3", "lost": 1, "left": 0} in report["events"]
    a, b = report["sides"]
    assert (a["total"], b["total"]) == (10 + 2 + 3, 4 + 0)


@pytest.mark.nojit
def test_scenario_errors_say_file_line_key_reason(tmp_path):
    """A malformed Crown scenario exits 2 with one `file:line: key: reason` per problem
    and no traceback."""
    path = _scenario(tmp_path, """name = "bad"
[[zones]]
zone = "Z9"
side = "A"
[[commands]]
do = "attack"
player = 7
zone = "C2"
""")
    code, output = _run_scenario(path)
    assert code == 2 and "Traceback" not in output
    assert output.splitlines() == [
        f"{path}:3: zones.0.zone: unknown zone 'Z9'; zones: W1, W2, W3, W4, W5, C1, C2, C3, "
        "C4, C5, E1, E2, E3, E4, E5",
        f"{path}:7: commands.0.player: the match has players 0 to 5"]
    path = _scenario(tmp_path, 'wave = 1\nturn = 3\n')
    code, output = _run_scenario(path)
    assert code == 2 and output.splitlines() == [f"{path}:2: turn: unknown key"]


def test_crown_mix_prints_each_pairing_and_refuses_a_bad_override():
    """tools/crown_mix.py: one row per team-size pairing whose side A, side B and draw
    shares add up to 100 %, the designer's figures below it, and exit 2 with the
    table's reason for an override the tables refuse."""
    import os
    import re
    import subprocess
    import sys

    from sim.rules.tables import REPO_ROOT

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    tool = str(REPO_ROOT / "tools" / "crown_mix.py")
    done = subprocess.run([sys.executable, tool, "--matches", "40", "--sizes", "1v1,2v3"],
                          env=env, capture_output=True, text=True, check=True)
    rows = [line for line in done.stdout.splitlines() if re.match(r"\| \d v \d \|", line)]
    assert [r.split("|")[1].strip() for r in rows] == ["1 v 1", "2 v 3"]
    for row in rows:
        shares = [float(cell.split("%")[0]) for cell in row.split("|")[2:5]]
        assert sum(shares) == pytest.approx(100, abs=0.2)
    for figure in ("first-in-order edge", "fault-round leader's conversion",
                   "attacks decided by Surge", "| defender |", "| last_round_extra |"):
        assert figure in done.stdout
    bad = subprocess.run([sys.executable, tool, "--matches", "1", "--set", "core.faces.12=booster"],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 2
    assert "core.faces.12: 'core.faces.12' is not a position of a list of 12" in bad.stderr


@pytest.mark.nojit
def test_k15_a_rolls_scoring_shows_the_top_face_and_what_each_touching_face_adds(tables):
    """K15 (and the page's first example): face 8 shows its Wildcard leading as a
    Defender, 2 × 2 = 4, the Booster on face 2 +2, the Defenders on faces 3 and 9 +1
    each, the Producer and the Attacker nothing: 8. Every face's sum is the kernel's."""
    from sim.engine.crown import roll_scoring

    shown = roll_scoring(tables, 8)
    assert (shown["widget"], shown["lead"], shown["power_points"], shown["crown"]) == \
        ("wildcard", "defender", 4, 8)
    assert [(t["face"], t["adds"]) for t in shown["touching"]] == \
        [(1, 0), (2, 2), (3, 1), (6, 0), (9, 1)]
    for face in range(1, 13):
        assert roll_scoring(tables, face)["crown"] == crown_of(tables.record, np.int64(face - 1))
