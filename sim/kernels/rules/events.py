"""The match's event log: fixed-width int64 rows appended by rule kernels.

Row fields are sim.rules.codes.EVENT_COLUMNS (turn, kind, seat, by, city, a, b, c);
what a, b, c hold for each kind is sim.rules.codes.EVENT_KINDS. When the log is
full, rows are counted in n_events but not stored.
"""

from __future__ import annotations

import numpy as np

from sim.jit import njit


@njit
def log_event(event_log: np.ndarray, n_events: np.ndarray, turn: np.int64, kind: np.int64,
              seat: np.int64, by: np.int64, city: np.int64, a: np.int64, b: np.int64,
              c: np.int64) -> np.int64:
    """Append one row; returns its index (rows past capacity are counted, not stored)."""
    i = n_events[0]
    if i < event_log.shape[0]:
        event_log[i, 0] = turn
        event_log[i, 1] = kind
        event_log[i, 2] = seat
        event_log[i, 3] = by
        event_log[i, 4] = city
        event_log[i, 5] = a
        event_log[i, 6] = b
        event_log[i, 7] = c
    n_events[0] = i + 1
    return i
