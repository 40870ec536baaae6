"""Whole-turn play: the AI plays every seat (filled in by the AI issue)."""

from __future__ import annotations

from sim.kernels import reasons as R


def play_turns(state, tb, board, n: int) -> int:
    """Not available until the AI exists: refused, state untouched."""
    return R.R_NO_AI
