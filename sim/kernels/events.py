"""The match's event log: fixed-width int64 rows appended by rule kernels.

Row fields (EVENT_FIELDS = 8): turn, kind, seat, by, city, a, b, c. What a,
b, c hold depends on the kind (see EVENT_KINDS in sim.events_text). When the
log is full, rows are counted in n_events but not stored.
"""

from __future__ import annotations

import numpy as np

from sim.jit import njit

# event kinds
EV_CAPTURE = 0          # seat=old owner (-2 village), by=capturer, city, a=unit
EV_CAPITAL_FALL = 1     # seat=old owner, by=capturer, city=fallen capital, a=new capital or -1
EV_TRANSFER = 2         # seat=old owner, by=capturer, city, a=row of the capital_fall
EV_KEPT = 3             # seat=old owner, city kept beyond the radius, a=row of the capital_fall
EV_ELIMINATED = 4       # seat, by, a=row of the cause event
EV_REVOLT_START = 5     # seat=owner, city, a=turns, b=cause code
EV_REVOLT_END = 6       # seat=owner, city, b=cause code
EV_OBSERVATORY_QUEUED = 7   # seat, city
EV_OBSERVATORY_LOST = 8     # seat=old owner, by, city
EV_VICTORY = 9          # seat=winner, a=victory code
EV_TRUCE = 10           # seat=buyer, by=other seat, a=turns, b=price
EV_PACT = 11            # seat=target, a=members bitmask, b=turns
EV_UNREST = 12          # seat, city, a=turns
EV_FOUND = 13           # seat, city
EV_TILE_BOUGHT = 14     # seat, city, a=tile, b=price
EV_CAMP_CLEARED = 15    # seat, a=camp, b=gold
EV_BUILT = 16           # seat, city, a=item code
EV_OBSERVATORY_COMPLETED = 17  # seat, city
EV_PACT_END = 18        # seat=target, a=pact slot
EV_UNIT_DISBANDED = 19  # seat, a=unit

EVENT_NAMES = (
    "capture", "capital_fall", "transfer", "kept", "eliminated", "revolt_start",
    "revolt_end", "observatory_queued", "observatory_lost", "victory", "truce", "pact",
    "unrest", "found", "tile_bought", "camp_cleared", "built", "observatory_completed",
    "pact_end", "unit_disbanded",
)


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
