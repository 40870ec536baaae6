"""D9 (a truce is an offer), D10 (values know the caps and the turns left) and the
early defence of the AI, on hand-built positions: the AI's own kernels asked what
they would offer, accept, build and guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.engine.scenario import load_scenario
from sim.kernels.ai.diplomacy import accepts_truce, truce_offer, truce_worth
from sim.kernels.ai.military import home_guards
from sim.kernels.ai.production import Room, building_value, science_left
from sim.kernels.rules.commands import offer_truce
from sim.kernels.rules.events import log_event
from sim.rules import codes as R
from tests.conftest import FIXTURE_TABLES

# seat 0 holds two cities; seat 1 one, with its army at seat 0's door
WAR = """
name = "seat 1's army at seat 0's cities"
turn = {turn}
active_seat = 0
[board]
radius = 7
[[seats]]
gold = {gold}
[[seats]]
gold = 0
[[cities]]
seat = 0
at = [-5, 0]
[[cities]]
seat = 0
at = [-1, -4]
[[cities]]
seat = 1
at = [4, 0]
{units}
"""
ARMY = "".join(f'[[units]]\nseat = 1\ntype = "warrior"\nat = [{q}, {r}]\n'
               for q, r in ((-4, 0), (-4, 1), (-3, 0), (-2, -3)))


def _war(tmp_path: Path, gold: int = 400, turn: int = 20, units: str = ARMY,
         personalities: tuple[str, str] = ("balanced", "balanced")):
    path = tmp_path / "war.toml"
    path.write_text(WAR.format(gold=gold, turn=turn, units=units))
    scn = load_scenario(path, FIXTURE_TABLES)
    st, tb = scn.state, scn.tables.arrays(None, 2)
    names = scn.tables.personality_names
    for s, name in enumerate(personalities):
        st.seat_personality[s] = names.index(name)
    return scn, st, tb


def _took_a_city(st, turn: int) -> None:
    """Seat 1 took one of seat 0's cities on `turn` (its capture row in the log)."""
    log_event(st.event_log, st.n_events, np.int64(turn), np.int64(R.EV_CAPTURE),
              np.int64(0), np.int64(1), np.int64(1), np.int64(0), np.int64(0), np.int64(0))


@pytest.mark.nojit
def test_d9_the_pressed_seat_offers_a_price_its_rival_accepts(tmp_path):
    """D9: under an army it cannot match, seat 0 names a price (at least truce_price,
    no more than the truce is worth to it, within its gold) and seat 1, reading the
    war the same way, accepts it; a price below what fighting on is worth to seat 1
    is declined. Both answers go to the log, only the accepted one moves gold."""
    scn, st, tb = _war(tmp_path)
    ai = tb.ai[st.seat_personality[0]]
    other, price = truce_offer(st, tb, ai, scn.board.distance, np.int64(0))
    assert other == 1
    assert tb.truce_price <= price <= truce_worth(st, tb, ai, scn.board.distance, 0, 1)
    assert price <= st.seat_gold[0]
    assert accepts_truce(st, tb, scn.board.distance, np.int64(1), np.int64(0), np.int64(price))
    ask = -truce_worth(st, tb, tb.ai[st.seat_personality[1]], scn.board.distance, 1, 0)
    assert ask > tb.truce_price   # so a price of truce_price is a cheap one here
    assert not accepts_truce(st, tb, scn.board.distance, np.int64(1), np.int64(0),
                             np.int64(tb.truce_price))
    gold = int(st.seat_gold[0])
    assert offer_truce(st, tb, np.int64(1), np.int64(0), np.int64(tb.truce_price),
                       False) == R.OK
    assert int(st.seat_gold[0]) == gold and st.truce_turns[0, 1] == 0
    assert offer_truce(st, tb, np.int64(1), np.int64(0), np.int64(price), True) == R.OK
    assert int(st.seat_gold[0]) == gold - price and int(st.seat_gold[1]) == price
    assert st.truce_turns[0, 1] == st.truce_turns[1, 0] == tb.truce_turns
    kinds = st.event_log[: st.n_events[0], R.COL_KIND].tolist()
    assert kinds[-2:] == [R.EV_TRUCE_DECLINED, R.EV_TRUCE]


@pytest.mark.nojit
def test_d9_a_seat_winning_a_war_declines_a_cheap_truce(tmp_path):
    """D9: the cities seat 1 just took from seat 0 raise its ask; a price the free
    position would have fetched is now declined, and a conqueror (it counts its
    conquests at conquest_value_pct 150) asks more than a balanced seat."""
    scn, st, tb = _war(tmp_path)
    d = scn.board.distance
    _other, calm_price = truce_offer(st, tb, tb.ai[st.seat_personality[0]], d, np.int64(0))
    _took_a_city(st, 19)
    balanced = -truce_worth(st, tb, tb.ai[st.seat_personality[1]], d, 1, 0)
    assert balanced > calm_price
    assert not accepts_truce(st, tb, d, np.int64(1), np.int64(0), np.int64(calm_price))
    _scn, st_c, tb_c = _war(tmp_path, personalities=("balanced", "conqueror"))
    _took_a_city(st_c, 19)
    conqueror = -truce_worth(st_c, tb_c, tb_c.ai[st_c.seat_personality[1]], d, 1, 0)
    assert conqueror > balanced
    assert not accepts_truce(st_c, tb_c, d, np.int64(1), np.int64(0), np.int64(balanced))


@pytest.mark.nojit
def test_d9_no_offer_without_a_threat_or_after_a_decline(tmp_path):
    """D9: the buyer offers only when a truce is worth it: not with no army at its
    cities, and not again to a seat that declined it within retry_turns."""
    scn, st, tb = _war(tmp_path, units="")
    ai = tb.ai[st.seat_personality[0]]
    assert truce_offer(st, tb, ai, scn.board.distance, np.int64(0))[0] == -1
    scn, st, tb = _war(tmp_path)
    offer_truce(st, tb, np.int64(1), np.int64(0), np.int64(tb.truce_price), False)
    assert truce_offer(st, tb, ai, scn.board.distance, np.int64(0))[0] == -1
    st.turn[0] += ai.retry_turns + 1
    assert truce_offer(st, tb, ai, scn.board.distance, np.int64(0))[0] == 1
    assert offer_truce(st, tb, np.int64(1), np.int64(0), np.int64(tb.truce_price - 1),
                       True) == R.R_PRICE_LOW


def _value(st, tb, city: int, item: str, room: Room, tables) -> int:
    b = tables.building_names.index(item)
    ai = tb.ai[st.seat_personality[0]]
    return int(building_value(st, tb, ai, np.int64(0), np.int64(city), np.int64(b),
                              np.int64(0), np.int64(-1), False, room))


@pytest.mark.nojit
def test_d10_a_granary_adds_nothing_at_the_population_cap(tmp_path):
    """D10: food counts while the city can grow; at max_population a Granary is
    worth nothing, and a Market still is."""
    scn, st, tb = _war(tmp_path, units="")
    room = Room(np.int64(80), np.int64(3), np.bool_(True))
    assert _value(st, tb, 0, "granary", room, scn.tables) > 0
    st.city_pop[0] = tb.max_population
    assert _value(st, tb, 0, "granary", room, scn.tables) == 0
    assert _value(st, tb, 0, "market", room, scn.tables) > 0


@pytest.mark.nojit
def test_d10_values_fall_with_the_turns_left_and_the_last_tech(tmp_path):
    """D10: a building that would complete after the last turn is worth nothing, one
    with few turns left is worth less; science is worth nothing once every tech
    the seat may research is known (D7)."""
    scn, st, tb = _war(tmp_path, units="")
    full = Room(np.int64(80), np.int64(3), np.bool_(True))
    late = Room(np.int64(14), np.int64(3), np.bool_(True))
    over = Room(np.int64(5), np.int64(3), np.bool_(True))
    values = [_value(st, tb, 0, "market", r, scn.tables) for r in (full, late, over)]
    assert values[0] > values[1] > values[2] == 0
    assert science_left(st, tb, np.int64(0))
    st.seat_techs[0, :] = 1
    assert not science_left(st, tb, np.int64(0))
    b = scn.tables.building_names.index("madrasa")
    y = tb.building_yield[b]
    assert y[R.SCIENCE] > 0 and y.sum() == y[R.SCIENCE]
    assert _value(st, tb, 0, "madrasa", Room(np.int64(80), np.int64(3), np.bool_(False)),
                  scn.tables) == 0


@pytest.mark.nojit
def test_early_defence_guards_the_capital_then_lets_go(tmp_path):
    """Early defence: for the first guard_pct % of the match the seat's home_guard
    fighting units nearest its capital are its guards; later there are none."""
    units = ('[[units]]\nseat = 0\ntype = "warrior"\nat = [0, 0]\n'
             '[[units]]\nseat = 0\ntype = "warrior"\nat = [-4, 0]\n'
             '[[units]]\nseat = 0\ntype = "warrior"\nat = [-5, 2]\n'
             '[[units]]\nseat = 0\ntype = "warrior"\nat = [-4, 2]\n')
    scn, st, tb = _war(tmp_path, units=units, turn=5)
    ai = tb.ai[st.seat_personality[0]]
    mine = np.arange(int(st.n_units[0]), dtype=np.int64)
    assert ai.home_guard == 3
    assert home_guards(st, tb, ai, scn.board.distance, np.int64(0), mine).tolist() == [1, 2, 3]
    st.turn[0] = st.last_turn[0] * ai.guard_pct // 100 + 1
    assert home_guards(st, tb, ai, scn.board.distance, np.int64(0), mine).size == 0


def test_d9_truce_summary_counts_offers_acceptance_and_who_won():
    """The report's truce section (sim.analysis.truces): offers per match, the accepted
    share with its interval, cities held ten turns on, and who won the match."""
    import polars as pl

    from sim.analysis.truces import truce_summary

    def offer(m, accepted, buyer, seller, lost):
        return {"variant": "v", "match_index": m, "buyer": buyer, "seller": seller,
                "price": 40 if accepted else 30, "accepted": accepted,
                "buyer_cities_before": 3, "buyer_cities_after": 3 - lost,
                "seller_cities_before": 2, "seller_cities_after": 2 + lost}

    truces = pl.DataFrame([offer(0, True, 0, 1, 0), offer(0, False, 2, 1, 1),
                           offer(1, True, 1, 0, 0), offer(1, True, 3, 2, 0)])
    matches = pl.DataFrame({"variant": ["v"] * 4, "match_index": [0, 1, 2, 3],
                            "winner": [0, 2, None, 1]})
    rows = {r["answer"]: r for r in truce_summary(truces, matches).iter_rows(named=True)}
    assert set(rows) == {"accepted", "declined", "all offers"}
    every = rows["all offers"]
    assert every["offers"] == 4 and every["offers per match"] == 1.0
    assert every["acceptance"] == 0.75
    assert every["acceptance low"] < 0.75 < every["acceptance high"]
    assert rows["declined"]["buyer cities +10"] == -1 and rows["declined"]["seller won"] == 0
    assert rows["accepted"]["mean price"] == 40
    # match 0 (buyer 0 won), match 1 (seller 2 of the last offer won; buyer 1 did not)
    assert rows["accepted"]["buyer won"] == 1 / 3 and rows["accepted"]["seller won"] == 1 / 3
    # the report counts the offers slice by slice (truce_counts, summed): the same table
    from polars.testing import assert_frame_equal

    from sim.analysis.load import sum_over_slices
    from sim.analysis.truces import truce_counts
    sliced = sum_over_slices(truces.lazy(), lambda part: truce_counts(part, matches),
                             matches.select("variant", "match_index"), size=1,
                             by=("variant", "answer"))
    assert sliced.filter(pl.col("answer") == "all offers")["offers"].to_list() == [4]
    assert_frame_equal(truce_summary(None, matches, sliced), truce_summary(truces, matches))
