"""Random legal play (issue 43): the ladder's floor, a seat that gives random orders.

At the opening of each of its turns a random-play seat (State.seat_skill ==
SKILL_RANDOM) draws its orders uniformly among every order it may give
(sim.kernels.lookahead.order_options with the search's `[ai.search] targets`: each
personality × each war order, the current ones included) and the skill-0 AI plays the
turn by them. So its production, research, diplomacy and war follow a plan that
changes at random every turn, through the same rule functions as every other seat:
every action stays legal. It is random among the orders the D11 levels choose
between, not among single unit moves: the levels above it differ from it only in how
they pick the same orders, which is what a ladder compares.

Random numbers: one keyed draw per turn from the seat's own random-play stream
(State.rng_random, Purpose.RANDOM_PLAY; draw_key with the turn), so no other stream of
the match moves and the draw is the same on any worker or chunking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.lookahead import order_options
from sim.rules.codes import DRAW_PLAN
from sim.world.rng import draw_key, keyed_below

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def random_orders(st: State, tb: TableArrays, board: Board,
                  seat: np.int64) -> tuple[np.int64, np.int64]:
    """(plan, target): the orders a random-play seat gives this turn, each of
    order_options' N orders with chance 1 / N. Changes nothing of `st`."""
    plans, targets = order_options(st, tb, board, seat, tb.search_targets)
    key = draw_key(st.rng_random[seat], st.turn[0], np.int64(DRAW_PLAN), seat)
    pick = keyed_below(key, np.int64(plans.shape[0]))
    return plans[pick], targets[pick]
