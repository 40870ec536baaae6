"""Graded choices (D8, issue 11): the kernel equals a plain reference, draws only from
the seat's own AI stream by a keyed draw (issue 44), and a small change to an
option's value is a small change in how often it is chosen."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st_

from sim.kernels.ai.choice import band_weights, graded_pick
from sim.rules.codes import DRAW_BUILD, DRAW_RESEARCH
from sim.world.state import empty_state
from tests.reference.engine import draw_key, keyed_below

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


def _pick(st, seat, values, band_pct, subject=0, purpose=DRAW_BUILD):
    return int(graded_pick(st, np.int64(seat), values, np.int64(values.shape[0]),
                           np.int64(band_pct), np.int64(purpose), np.int64(subject)))


def test_band_zero_is_the_argmax_and_ties_are_drawn():
    st = _state()
    values = np.asarray([5, 9, 2, 9], dtype=np.int64)
    picks = {_pick(st, 0, values, 0, subject=c) for c in range(200)}
    assert picks == {1, 3}
    assert _pick(st, 0, np.zeros(3, dtype=np.int64), 50) == -1


def test_a_pick_changes_no_stream_and_reads_only_its_seats_key():
    """Keys are not counters: picking changes no state, the same (seat, turn, purpose,
    subject) picks the same option, and another seat's key does not matter."""
    st = _state()
    before = st.rng_ai.copy()
    values = np.asarray([10, 9, 8], dtype=np.int64)
    picks = [_pick(st, 1, values, 50, subject=c) for c in range(64)]
    assert np.array_equal(st.rng_ai, before)
    assert picks == [_pick(st, 1, values, 50, subject=c) for c in range(64)]
    st.rng_ai[0] = 12345
    assert picks == [_pick(st, 1, values, 50, subject=c) for c in range(64)]
    assert len(set(picks)) == 3
    # the research draw of the same turn is another draw, not the build draw again
    research = [_pick(st, 1, values, 50, subject=c, purpose=DRAW_RESEARCH) for c in range(64)]
    assert research != picks


def test_choice_frequency_moves_with_value_as_a_slope():
    """A near-best option is chosen sometimes; raising its value a little raises its
    share a little (no cliff), and past the band it is never chosen."""
    shares = []
    n = 2000
    st = _state(11)
    for v in (500, 700, 900, 950, 1000):
        values = np.asarray([1000, v], dtype=np.int64)
        hits = sum(_pick(st, 0, values, 50, subject=c) == 1 for c in range(n))
        shares.append(hits / n)
    assert shares[0] == 0.0                        # at the band's floor: never
    assert all(a < b for a, b in pairwise(shares))
    assert 0.4 < shares[-1] < 0.6                  # equal values: about half
    assert max(b - a for a, b in pairwise(shares)) < 0.35


def test_a_small_change_of_value_rarely_changes_a_keyed_pick():
    """Synchronised draws (issue 44): the same key walks the same place along the
    weights, so nudging one value by 1 % changes the pick only for the draws that
    fall near a boundary, not for about half of them as an independent draw would."""
    st = _state(5)
    base = np.asarray([1000, 950, 900, 870], dtype=np.int64)
    nudged = base.copy()
    nudged[2] += 9
    n = 4000
    changed = sum(_pick(st, 0, base, 30, subject=c) != _pick(st, 0, nudged, 30, subject=c)
                  for c in range(n))
    assert 0 < changed / n < 0.05


@settings(deadline=None, max_examples=60)
@given(st_.lists(st_.integers(-50, 5000), min_size=1, max_size=12), st_.integers(0, 100),
       st_.integers(0, 1 << 40), st_.integers(0, 500), st_.integers(-1, 40))
@example([100, 50], 50, 7, 1, 0)        # a value on the floor has no weight: no draw
@example([100, 50, 75], 50, 7, 1, 0)    # nor a share of the draw
def test_a_pick_is_the_keyed_draw_over_band_weights(values, band_pct, seed, turn, subject):
    """graded_pick reads each weight off the band's floor as it goes: the same pick as
    the plain rule, one keyed draw (tests.reference: draw_key, keyed_below) below the
    weights' total walked over band_weights, or the one option with weight."""
    arr = np.asarray(values, dtype=np.int64)
    st = _state(seed)
    st.turn[0] = turn
    weights = [int(w) for w in band_weights(arr, np.int64(len(values)), np.int64(band_pct))]
    live = [i for i, w in enumerate(weights) if w > 0]
    if len(live) <= 1:
        expect = live[0] if live else -1
    else:
        key = draw_key(int(st.rng_ai[1]), turn, DRAW_BUILD, subject)
        x = keyed_below(key, sum(weights))
        expect = next(i for i in range(len(weights)) if x < sum(weights[: i + 1]))
    assert _pick(st, 1, arr, band_pct, subject=subject) == expect
