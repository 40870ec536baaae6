"""Where a match's time goes (`sim bench match --phases`): the match loop's own
functions add each phase's CPU cycles to a `ticks` array they are handed.

ticks: (N_PHASES,) int64, phase k's cycles in ticks[k] (sim.rules.codes.PHASES names
them), or a (0,) array: no timing, and no clock read. Every match is played by the one
loop (sim.kernels.loop); timing it changes nothing it plays.
"""

from __future__ import annotations

import numpy as np

from sim.jit import cycles, njit


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def clock(ticks: np.ndarray) -> np.int64:
    """The cycle counter when timing (ticks not empty), else 0."""
    if ticks.shape[0] == 0:
        return np.int64(0)
    return cycles()


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def tick(ticks: np.ndarray, phase: np.int64, since: np.int64) -> np.int64:
    """Add the cycles since `since` to ticks[phase]; returns the clock now (0 when not
    timing)."""
    if ticks.shape[0] == 0:
        return np.int64(0)
    now = cycles()
    ticks[phase] += now - since
    return now


def no_ticks() -> np.ndarray:
    """The (0,) ticks of an untimed call from Python."""
    return np.zeros(0, dtype=np.int64)
