"""The match's event log: fixed-width int64 rows appended by rule kernels.

Row fields are sim.rules.codes.EVENT_COLUMNS (turn, kind, seat, by, city, a, b, c);
what a, b, c hold for each kind is sim.rules.codes.EVENT_KINDS. When the log is
full, rows are counted in n_events but not stored.
"""

from __future__ import annotations

import numpy as np

from sim.jit import njit
from sim.rules.codes import COL_A, COL_B, COL_BY, COL_C, COL_CITY, COL_KIND, COL_SEAT, COL_TURN


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def log_event(event_log: np.ndarray, n_events: np.ndarray, turn: np.int64, kind: np.int64,
              seat: np.int64, by: np.int64, city: np.int64, a: np.int64, b: np.int64,
              c: np.int64) -> np.int64:
    """Append one row; returns its index (rows past capacity are counted, not stored)."""
    i = n_events[0]
    if i < event_log.shape[0]:
        event_log[i, COL_TURN] = turn
        event_log[i, COL_KIND] = kind
        event_log[i, COL_SEAT] = seat
        event_log[i, COL_BY] = by
        event_log[i, COL_CITY] = city
        event_log[i, COL_A] = a
        event_log[i, COL_B] = b
        event_log[i, COL_C] = c
    n_events[0] = i + 1
    return i
