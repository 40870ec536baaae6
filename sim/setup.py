"""Python entry to a new match: board, seeded map, starting state."""

from __future__ import annotations

from sim.board import Board, make_board
from sim.kernels.setup import setup_match
from sim.rng import Purpose, new_state, stream_seed
from sim.state import State, empty_state
from sim.tables import Tables


def new_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
              length: str | None = None) -> tuple[State, Board]:
    """The opening state of match `match_index` under root `seed` (streams: sim.rng)."""
    tb = tables.arrays()
    n_seats = n_seats or tables.model.match.seats
    board = make_board(int(tb.radius))
    st = empty_state(board.n_tiles, n_seats, len(tables.tech_names), len(tables.building_names))
    st.last_turn[0] = tables.match_length(length)
    st.rng_ai[0] = stream_seed(seed, match_index, Purpose.AI)
    st.rng_events[0] = stream_seed(seed, match_index, Purpose.EVENTS)
    names = tables.personality_names
    order = tables.model.match.personalities
    for s in range(n_seats):
        st.seat_personality[s] = names.index(order[s % len(order)])
    setup_match(st, tb, board, new_state(stream_seed(seed, match_index, Purpose.MAP)), n_seats)
    return st, board
