"""Counter-based random numbers with explicit state, usable inside numba.

The generator is splitmix64: its whole state is one uint64 counter held in a
(1,) uint64 array that the caller passes in, so a kernel's draws are a pure
function of the state it was given, and a Python reference can replay them.

Streams are derived from (root seed, match index, purpose) with NumPy's
SeedSequence, never from a balance variant: every variant of a sweep plays
match i on the same map with the same AI tie-breaks and event draws (common
random numbers), and a match's result cannot depend on worker count or chunking.

Two ways to draw. The map is drawn in sequence from its stream (`below`,
`weighted`: a counter advanced per draw). Play draws (the AI's graded choices, the
event cards) are keyed: each is a pure function of (the stream's key, turn, what the
draw is for, what it concerns) by `draw_key`, so a variant that makes one more or one
fewer draw on some turn leaves every other draw of the match as it was, and a draw
among near-equal options maps one uniform number through the weights (`keyed_below`,
`keyed_weighted`), so a small change of a weight moves the choice only near its
boundary (synchronised streams, issue 44).
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache

import numpy as np

from sim.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


class Purpose(IntEnum):
    """What a stream is for; part of the stream's derivation key."""

    MAP = 0
    AI = 1
    EVENTS = 2
    # Crown's rolls, order ties and AI ties (RULES-crown.md L7): one stream per match,
    # each draw keyed by (round × waves + wave, sim.rules.crown.DRAW_*, player) through
    # draw_key; a new value, so no hex stream moves
    CROWN = 3
    # a random-play seat's draws of its decisions (issue 43), per seat; derived only for
    # such seats, so no other stream of any match changes
    RANDOM_PLAY = 4


def stream_seed(root_seed: int, match_index: int, purpose: Purpose,
                seat: int | None = None) -> int:
    """The 64-bit starting counter of one stream, from (root seed, match, purpose),
    and for a per-seat stream (the AI's, D8) the seat: one seat's draws never shift
    another's. Equal to
    `SeedSequence(root_seed, spawn_key=key).generate_state(1, np.uint64)[0]`,
    key = (match_index, purpose[, seat]), computed by `_seed_sequence_u64`."""
    if root_seed < 0 or match_index < 0:
        raise ValueError("root seed and match index must be non-negative")
    key = (match_index, int(purpose)) if seat is None else (match_index, int(purpose), seat)
    return _seed_sequence_u64(root_seed, key)


# NumPy's SeedSequence (numpy/random/bit_generator.pyx, after O'Neill's seed_seq): its
# hash and mix constants, 32-bit words, a pool of 4 words
_MASK32 = 0xFFFFFFFF
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_XSHIFT = 16
_POOL = 4
_GEN_B1 = (_INIT_B * _MULT_B) & _MASK32
_GEN_B2 = (_GEN_B1 * _MULT_B) & _MASK32


def _words(n: int) -> list[int]:
    """SeedSequence's 32-bit words of a non-negative int, least significant first."""
    if n == 0:
        return [0]
    out = []
    while n > 0:
        out.append(n & _MASK32)
        n >>= 32
    return out


def _hashmix(value: int, hash_const: int) -> tuple[int, int]:
    """(hashed value, next hash constant)."""
    value ^= hash_const
    hash_const = (hash_const * _MULT_A) & _MASK32
    value = (value * hash_const) & _MASK32
    return value ^ (value >> _XSHIFT), hash_const


def _mix(x: int, y: int) -> int:
    r = (_MIX_L * x - _MIX_R * y) & _MASK32
    return r ^ (r >> _XSHIFT)


@lru_cache(maxsize=256)
def _pool_after(root_seed: int, key: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """(pool, hash constant) of SeedSequence(root_seed, spawn_key=key...) once the root
    seed (its words padded to the pool's 4, as SeedSequence does when a spawn key
    follows) and the key's words are mixed in. Cached by prefix: the six streams of a
    match share the root seed and the match index, and the AI's the purpose too."""
    if not key:
        run = _words(root_seed)
        run += [0] * (_POOL - len(run))
        pool = [0] * _POOL
        h = _INIT_A
        for i in range(_POOL):
            pool[i], h = _hashmix(run[i], h)
        for i_src in range(_POOL):
            for i_dst in range(_POOL):
                if i_src != i_dst:
                    v, h = _hashmix(pool[i_src], h)
                    pool[i_dst] = _mix(pool[i_dst], v)
        return tuple(pool), h
    if key[-1] < 0:
        raise ValueError("expected non-negative integer")
    start, h = _pool_after(root_seed, key[:-1])
    pool = list(start)
    for word in _words(key[-1]):
        for i_dst in range(_POOL):
            # _hashmix then _mix, inline (this loop is most of a stream's cost)
            v = word ^ h
            h = (h * _MULT_A) & _MASK32
            v = (v * h) & _MASK32
            v ^= v >> _XSHIFT
            r = (_MIX_L * pool[i_dst] - _MIX_R * v) & _MASK32
            pool[i_dst] = r ^ (r >> _XSHIFT)
    return tuple(pool), h


def _seed_sequence_u64(root_seed: int, key: tuple[int, ...]) -> int:
    """SeedSequence(root_seed, spawn_key=key).generate_state(1, np.uint64)[0] as an int,
    without building a SeedSequence (which cost more than the rest of a match's setup);
    a root seed of more than 4 words is left to NumPy. Checked against NumPy on every
    kind of seed and key (tests/test_board_rng_map.py, the goldens)."""
    if root_seed >> (32 * _POOL):
        seq = np.random.SeedSequence(root_seed, spawn_key=key)
        return int(seq.generate_state(1, dtype=np.uint64)[0])
    pool, _h = _pool_after(root_seed, key)
    # generate_state: two 32-bit words from the pool (hash constants _INIT_B times
    # _MULT_B once, twice), little-endian into one uint64
    lo = ((pool[0] ^ _INIT_B) * _GEN_B1) & _MASK32
    hi = ((pool[1] ^ _GEN_B1) * _GEN_B2) & _MASK32
    return (lo ^ (lo >> _XSHIFT)) | (hi ^ (hi >> _XSHIFT)) << 32


def new_state(seed: int) -> np.ndarray:
    """A fresh generator state: a (1,) uint64 array holding the counter."""
    return np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


@njit(inline="always")
def _finalise(z: np.uint64) -> np.uint64:
    """splitmix64's output function: a bijection of 64-bit words that mixes every bit."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit
def next_u64(state: np.ndarray) -> np.uint64:
    """Advance the (1,) uint64 `state` and return the next 64-bit output."""
    state[0] += _GOLDEN
    return _finalise(state[0])


@njit(inline="always")  # called with several integer types: one compile, not one per type
def below(state: np.ndarray, n: np.int64) -> np.int64:
    """Uniform integer in [0, n) for n >= 1, without modulo bias (rejection)."""
    bound = np.uint64(n)
    # Largest multiple of n representable: reject draws at or above it.
    limit = np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % bound)
    while True:
        x = next_u64(state)
        if x < limit:
            return np.int64(x % bound)


@njit(inline="always")
def _total(weights: np.ndarray) -> np.int64:
    total = np.int64(0)
    for w in weights:
        total += w
    return total


@njit(inline="always")
def _index_at(weights: np.ndarray, x: np.int64) -> np.int64:
    """The index whose cumulative weight first passes x (0 <= x < the total)."""
    for i in range(weights.shape[0]):
        x -= weights[i]
        if x < 0:
            return np.int64(i)
    return np.int64(weights.shape[0] - 1)


@njit
def weighted(state: np.ndarray, weights: np.ndarray) -> np.int64:
    """Index i drawn with probability weights[i] / sum(weights); integer weights >= 0."""
    return _index_at(weights, below(state, _total(weights)))


@njit
def draw_key(stream: np.uint64, turn: np.int64, purpose: np.int64, subject: np.int64) -> np.uint64:
    """The 64-bit key of one play draw: `stream` (a seat's AI key or the events key,
    State.rng_ai / rng_events), the turn, the purpose (sim.rules.codes.DRAW_*) and its
    subject (a city, a seat; -1 for none), each folded in through splitmix64."""
    h = _finalise(stream + _GOLDEN * np.uint64(turn + 1))
    h = _finalise(h + _GOLDEN * np.uint64(purpose + 1))
    return _finalise(h + _GOLDEN * np.uint64(subject + 2))


@njit
def keyed_below(key: np.uint64, n: np.int64) -> np.int64:
    """floor(u × n) for n >= 1, u = the key's top 32 bits / 2^32, in [0, 1), in exact
    integer arithmetic. Monotone in u, so the same key picks the same place along the
    range whatever n is (a weighted draw under a slightly changed total rarely changes
    its pick); each value's chance is off by at most n / 2^32 (utilities' totals are
    far below that)."""
    u = key >> _S32
    m = np.uint64(n)
    # u × n / 2^32 in two halves of n, each product below 2^64
    return np.int64(u * (m >> _S32) + ((u * (m & _LOW32)) >> _S32))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def keyed_weighted(key: np.uint64, weights: np.ndarray) -> np.int64:
    """Index i drawn with probability weights[i] / sum(weights) (integer weights >= 0,
    sum >= 1) by `keyed_below` over the cumulative weights."""
    return _index_at(weights, keyed_below(key, _total(weights)))
