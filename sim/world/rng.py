"""Counter-based random numbers with explicit state, usable inside numba.

The generator is splitmix64: its whole state is one uint64 counter held in a
(1,) uint64 array that the caller passes in, so a kernel's draws are a pure
function of the state it was given, and a Python reference can replay them.

Streams are derived from (root seed, match index, purpose) with NumPy's
SeedSequence, never from a balance variant: every variant of a sweep plays
match i on the same map with the same AI tie-breaks and event draws (common
random numbers), and a match's result cannot depend on worker count or chunking.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from sim.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)


class Purpose(IntEnum):
    """What a stream is for; part of the stream's derivation key."""

    MAP = 0
    AI = 1
    EVENTS = 2


def stream_seed(root_seed: int, match_index: int, purpose: Purpose,
                seat: int | None = None) -> int:
    """The 64-bit starting counter of one stream, from (root seed, match, purpose),
    and for a per-seat stream (the AI's, D8) the seat: one seat's draws never shift
    another's."""
    if root_seed < 0 or match_index < 0:
        raise ValueError("root seed and match index must be non-negative")
    key = (match_index, int(purpose)) if seat is None else (match_index, int(purpose), seat)
    seq = np.random.SeedSequence(root_seed, spawn_key=key)
    return int(seq.generate_state(1, dtype=np.uint64)[0])


def new_state(seed: int) -> np.ndarray:
    """A fresh generator state: a (1,) uint64 array holding the counter."""
    return np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


@njit
def next_u64(state: np.ndarray) -> np.uint64:
    """Advance the (1,) uint64 `state` and return the next 64-bit output."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit
def below(state: np.ndarray, n: np.int64) -> np.int64:
    """Uniform integer in [0, n) for n >= 1, without modulo bias (rejection)."""
    bound = np.uint64(n)
    # Largest multiple of n representable: reject draws at or above it.
    limit = np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % bound)
    while True:
        x = next_u64(state)
        if x < limit:
            return np.int64(x % bound)


@njit
def weighted(state: np.ndarray, weights: np.ndarray) -> np.int64:
    """Index i drawn with probability weights[i] / sum(weights); integer weights >= 0."""
    total = np.int64(0)
    for w in weights:
        total += w
    x = below(state, total)
    for i in range(weights.shape[0]):
        x -= weights[i]
        if x < 0:
            return np.int64(i)
    return np.int64(weights.shape[0] - 1)
