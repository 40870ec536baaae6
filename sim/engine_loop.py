"""Whole-turn play for scenario files: the AI continues from any position."""

from __future__ import annotations

import numpy as np

from sim.kernels import reasons as R
from sim.kernels.match import play_turns as _play_turns


def new_path_table(n_tiles: int) -> np.ndarray:
    """The AI's passable-distance table: rows filled on demand (-1 = not yet)."""
    return np.full((n_tiles, n_tiles), -1, dtype=np.int64)


def play_turns(state, tb, board, n: int) -> int:
    """`play_turns n`: refused once the match is over."""
    if state.finished[0]:
        return R.R_FINISHED
    _play_turns(state, tb, board, new_path_table(board.n_tiles), np.int64(n))
    return R.OK
