"""Graded choices (D8, issue 11): near-equal options are all played.

A utility AI that always takes the single best option turns every lever on a
near-best option into an on/off switch: a unit one point short of the best is
never built, one point over it replaces the best entirely. Instead the AI
draws among the options whose utility is within `band_pct` % of the best, each
with a weight equal to how far it clears the band's floor, by one keyed draw of the
seat's own AI stream (State.rng_ai, sim.world.rng.draw_key: keyed by turn, purpose
and subject, so common random numbers hold across variants and one draw more or
less elsewhere shifts none of them). A small change to an option's utility is then a
small change in how often it is chosen; `band_pct` 0 is the plain argmax (ties drawn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.rules.codes import PERCENT
from sim.world.rng import draw_key, keyed_below

if TYPE_CHECKING:
    from sim.world.state import State


@njit(inline='always')  # numba-inlined: two integers, no call
def band_floor(values: np.ndarray, n: np.int64, band_pct: np.int64) -> tuple[np.int64, bool]:
    """(floor, any): the band's floor best - max(best × band_pct %, 1) over
    `values[:n]`, and whether any value is positive (else no option has weight)."""
    best = np.int64(0)
    for i in range(n):
        best = max(best, values[i])
    return best - max(best * band_pct // PERCENT, np.int64(1)), best > 0


@njit
def band_weights(values: np.ndarray, n: np.int64, band_pct: np.int64) -> np.ndarray:
    """(n,) int64 draw weights of `values[:n]`: value - floor above the floor
    best - max(best × band_pct %, 1), else 0; all zero when no value is positive."""
    out = np.zeros(n, dtype=np.int64)
    floor, any_ = band_floor(values, n, band_pct)
    if any_:
        for i in range(n):
            if values[i] > floor:
                out[i] = values[i] - floor
    return out


@njit
def graded_pick(st: State, seat: np.int64, values: np.ndarray, n: np.int64,
                band_pct: np.int64, purpose: np.int64, subject: np.int64) -> np.int64:
    """Index into `values[:n]` (utilities, int64; <= 0: not an option) drawn with
    `band_weights`, or -1 when no option is positive. The draw is the seat's AI
    stream keyed by (turn, purpose, subject) (sim.rules.codes.DRAW_*: what is chosen,
    and for which city), made only when more than one option has weight. The weights are read off
    the floor as they are needed: the AI picks some 1,500 times a match, and an
    array for them was a sixth of a match's allocations."""
    floor, any_ = band_floor(values, n, band_pct)
    if not any_:
        return -1
    total = np.int64(0)
    last = np.int64(-1)
    count = np.int64(0)
    for i in range(n):
        if values[i] > floor:
            total += values[i] - floor
            last = i
            count += 1
    if count <= 1:
        return last
    x = keyed_below(draw_key(st.rng_ai[seat], st.turn[0], purpose, subject), total)
    for i in range(n):
        if values[i] > floor:
            if x < values[i] - floor:
                return i
            x -= values[i] - floor
    return last
