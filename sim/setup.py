"""A match's opening state: board, seeded streams, personalities, the map drawn on it."""

from __future__ import annotations

import numpy as np

from sim.board import Board, make_board
from sim.kernels.match import TURN_FIELDS
from sim.kernels.setup import setup_match
from sim.rng import Purpose, new_state, stream_seed
from sim.state import State, empty_state
from sim.tables import Tables


def prepare(tables: Tables, seed: int, match_index: int, n_seats: int | None,
            length: str | None, personalities: list[str] | None = None,
            ) -> tuple[State, Board, np.ndarray, np.ndarray, int]:
    """An empty state with the match's streams (sim.rng: root seed, match index,
    purpose), last turn and personalities; returns (state, board, turn_log,
    map stream, seats). `setup_match` then draws the map on the map stream."""
    tb = tables.arrays()
    n_seats = n_seats or tables.model.match.seats
    board = make_board(int(tb.radius))
    st = empty_state(board.n_tiles, n_seats, len(tables.tech_names), len(tables.building_names))
    st.last_turn[0] = tables.match_length(length)
    st.rng_ai[0] = stream_seed(seed, match_index, Purpose.AI)
    st.rng_events[0] = stream_seed(seed, match_index, Purpose.EVENTS)
    names = tables.personality_names
    order = personalities or tables.model.match.personalities
    for s in range(n_seats):
        st.seat_personality[s] = names.index(order[s % len(order)])
    turn_log = np.zeros((int(st.last_turn[0]) + 1, 6, TURN_FIELDS), dtype=np.int64)
    rng_map = new_state(stream_seed(seed, match_index, Purpose.MAP))
    return st, board, turn_log, rng_map, n_seats




def new_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
              length: str | None = None) -> tuple[State, Board]:
    """The opening state of match `match_index` under root `seed`, map drawn."""
    st, board, _log, rng_map, n_seats = prepare(tables, seed, match_index, n_seats, length)
    setup_match(st, tables.arrays(), board, rng_map, np.int64(n_seats))
    return st, board
