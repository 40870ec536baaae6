"""Graded choices (D8, issue 11): the kernel equals a plain reference, draws only from
the seat's own AI stream, and a small change to an option's value is a small change
in how often it is chosen."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st_

from sim.kernels.ai.choice import band_weights, graded_pick
from sim.world.rng import below, new_state, next_u64
from sim.world.state import empty_state

pytestmark = pytest.mark.nojit


def reference_weights(values: list[int], band_pct: int) -> list[int]:
    best = max([0, *values])
    if best <= 0:
        return [0] * len(values)
    floor = best - max(best * band_pct // 100, 1)
    return [v - floor if v > floor else 0 for v in values]


@settings(deadline=None)
@given(st_.lists(st_.integers(-50, 5000), min_size=1, max_size=12), st_.integers(0, 100))
def test_band_weights_equal_the_reference(values, band_pct):
    arr = np.asarray(values, dtype=np.int64)
    got = band_weights(arr, np.int64(len(values)), np.int64(band_pct))
    assert list(got) == reference_weights(values, band_pct)


def _state(seed: int = 3):
    st = empty_state(7, 2, 2, 2)
    st.rng_ai[0] = seed
    st.rng_ai[1] = seed + 1
    return st


def test_band_zero_is_the_argmax_and_ties_are_drawn():
    st = _state()
    values = np.asarray([5, 9, 2, 9], dtype=np.int64)
    picks = {int(graded_pick(st, np.int64(0), values, np.int64(4), np.int64(0)))
             for _ in range(200)}
    assert picks == {1, 3}
    assert graded_pick(st, np.int64(0), np.zeros(3, dtype=np.int64), np.int64(3),
                       np.int64(50)) == -1


def test_a_single_option_draws_nothing():
    st = _state()
    before = st.rng_ai.copy()
    values = np.asarray([0, 40, 0], dtype=np.int64)
    assert graded_pick(st, np.int64(1), values, np.int64(3), np.int64(50)) == 1
    assert np.array_equal(st.rng_ai, before)


def test_a_pick_draws_from_its_seat_only():
    st = _state()
    values = np.asarray([10, 9, 8], dtype=np.int64)
    graded_pick(st, np.int64(1), values, np.int64(3), np.int64(50))
    assert st.rng_ai[0] == 3                       # seat 0's stream untouched
    expect = new_state(4)
    next_u64(expect)
    assert st.rng_ai[1] == expect[0]               # seat 1 drew once


def test_choice_frequency_moves_with_value_as_a_slope():
    """A near-best option is chosen sometimes; raising its value a little raises its
    share a little (no cliff), and past the band it is never chosen."""
    shares = []
    for v in (500, 700, 900, 950, 1000):
        st = _state(11)
        values = np.asarray([1000, v], dtype=np.int64)
        n = 2000
        hits = sum(int(graded_pick(st, np.int64(0), values, np.int64(2), np.int64(50))) == 1
                   for _ in range(n))
        shares.append(hits / n)
    assert shares[0] == 0.0                        # at the band's floor: never
    assert all(a < b for a, b in pairwise(shares))
    assert 0.4 < shares[-1] < 0.6                  # equal values: about half
    assert max(b - a for a, b in pairwise(shares)) < 0.35


@settings(deadline=None, max_examples=60)
@given(st_.lists(st_.integers(-50, 5000), min_size=1, max_size=12), st_.integers(0, 100),
       st_.integers(0, 1 << 40))
@example([100, 50], 50, 7)        # a value on the floor has no weight: no draw
@example([100, 50, 75], 50, 7)    # nor a share of the draw
def test_a_pick_is_the_draw_over_band_weights(values, band_pct, seed):
    """graded_pick reads each weight off the band's floor as it goes: the same pick and
    the same stream afterwards as one draw below the weights' total, walked over
    band_weights (the plain rule), with no draw when at most one option has weight."""
    arr = np.asarray(values, dtype=np.int64)
    st = _state(seed)
    weights = [int(w) for w in band_weights(arr, np.int64(len(values)), np.int64(band_pct))]
    stream = st.rng_ai[1:2].copy()
    live = [i for i, w in enumerate(weights) if w > 0]
    if len(live) <= 1:
        expect = live[0] if live else -1
    else:
        x = int(below(stream, np.int64(sum(weights))))
        expect = next(i for i in range(len(weights)) if x < sum(weights[: i + 1]))
    got = graded_pick(st, np.int64(1), arr, np.int64(len(values)), np.int64(band_pct))
    assert got == expect
    assert st.rng_ai[1] == stream[0]
