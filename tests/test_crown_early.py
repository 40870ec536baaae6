"""tools/crown_early.py's reading of one match's per-round rows (docs/crown.md, "How
early a match is decided"): a side wiped out (no zone held, L4), the leader on points
after a round (K10) and whether the winner (K13) stays ahead from that round on."""

from __future__ import annotations

import numpy as np

from sim.rules.crown import NO_WINNER, ROUND_FIELDS, SIDE_A, SIDE_B
from tools.crown_early import early


def _rounds(totals: list[tuple[int, int]], zones: list[tuple[int, int]]) -> np.ndarray:
    out = np.zeros((len(totals), len(ROUND_FIELDS)), dtype=np.int64)
    for r, ((ta, tb), (za, zb)) in enumerate(zip(totals, zones, strict=True)):
        row = {"total_a": ta, "total_b": tb, "zones_a": za, "zones_b": zb}
        for name, value in row.items():
            out[r, ROUND_FIELDS.index(name)] = value
    return out


def test_early_reads_wipe_outs_leaders_and_when_the_winner_is_ahead_for_good():
    # A leads after round 1, B levels in round 2 and leads from round 3; B holds no
    # zone after round 1 and takes some back
    rounds = _rounds([(5, 2), (7, 7), (8, 12), (9, 20)], [(3, 0), (2, 1), (1, 4), (1, 6)])
    got = early(rounds, SIDE_B, 3)
    assert got["wiped"] == [1, 0, 0]
    assert got["led"] == [1, 0, 1] and got["leader_won"] == [0, 0, 1]
    assert got["decided"] == [0, 0, 1]
    won_by_a = early(rounds, SIDE_A, 3)          # the winner must be ahead on points
    assert won_by_a["leader_won"] == [1, 0, 0] and won_by_a["decided"] == [0, 0, 0]
    assert early(rounds, NO_WINNER, 3)["decided"] == [0, 0, 0]
