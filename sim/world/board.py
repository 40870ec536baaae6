"""Hexagonal board topology: axial coordinates, flat tile index, neighbours, distances.

A board of radius R holds the tiles (q, r) with |q|, |r|, |q + r| <= R, i.e.
3R(R+1) + 1 tiles (radius 9: 271). Tiles are numbered row by row (r ascending,
then q ascending); that index is the flat axis of every per-tile array.

Neighbour directions, in the column order of `neighbours`::

          2 (0,-1)   1 (+1,-1)
    3 (-1,0)    [q,r]    0 (+1,0)
          4 (-1,+1)  5 (0,+1)

Everything here is built once per radius (cached) and passed to kernels as
arguments.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from sim.rules.codes import (
    MAX_DISC_RADIUS,
)


def disc_size(radius: int) -> int:
    """Tiles within `radius` steps of a tile on an unbounded board: 3r(r+1) + 1."""
    return 3 * radius * (radius + 1) + 1


DIRECTIONS = np.array([(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)], dtype=np.int64)


class Board(NamedTuple):
    """Topology of a hexagonal board.

    radius: int, the board radius R.
    q, r: (T,) int64 axial coordinates of each tile index.
    index_of: (2R+1, 2R+1) int64, tile index at [q + R, r + R], -1 off board.
    neighbours: (T, 6) int64, neighbour tile index per direction (order in the
        module docstring), -1 off board.
    distance: (T, T) int64 hex distance in steps, terrain ignored.
    disc: (T, DISC) int64, the tiles within MAX_DISC_RADIUS steps of each tile,
        nearest first (ties by index), -1 past the board's edge. The first
        disc_size(r) entries of a row are exactly the tiles within r steps.
    """

    radius: int
    q: np.ndarray
    r: np.ndarray
    index_of: np.ndarray
    neighbours: np.ndarray
    distance: np.ndarray
    disc: np.ndarray

    @property
    def n_tiles(self) -> int:
        return int(self.q.shape[0])

    def index(self, q: int, r: int) -> int:
        """Tile index of axial (q, r), or -1 when it is off the board."""
        R = self.radius
        if not on_board(q, r, R):
            return -1
        return int(self.index_of[q + R, r + R])

    def axial(self, tile: int) -> tuple[int, int]:
        return int(self.q[tile]), int(self.r[tile])


def on_board(q: int, r: int, radius: int) -> bool:
    return abs(q) <= radius and abs(r) <= radius and abs(q + r) <= radius


def hex_distance(q1: int, r1: int, q2: int, r2: int) -> int:
    dq, dr = q1 - q2, r1 - r2
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


@lru_cache(maxsize=16)
def make_board(radius: int) -> Board:
    """Build (and cache) the topology tables of a board of `radius` >= 1."""
    if radius < 1:
        raise ValueError(f"board radius must be >= 1, got {radius}")
    coords = [(q, r) for r in range(-radius, radius + 1) for q in range(-radius, radius + 1)
              if on_board(q, r, radius)]
    q = np.array([c[0] for c in coords], dtype=np.int64)
    r = np.array([c[1] for c in coords], dtype=np.int64)
    side = 2 * radius + 1
    index_of = np.full((side, side), -1, dtype=np.int64)
    index_of[q + radius, r + radius] = np.arange(q.size)

    nq = q[:, None] + DIRECTIONS[None, :, 0]
    nr = r[:, None] + DIRECTIONS[None, :, 1]
    inside = (np.abs(nq) <= radius) & (np.abs(nr) <= radius) & (np.abs(nq + nr) <= radius)
    neighbours = np.full(nq.shape, -1, dtype=np.int64)
    neighbours[inside] = index_of[nq[inside] + radius, nr[inside] + radius]

    dq = q[:, None] - q[None, :]
    dr = r[:, None] - r[None, :]
    distance = (np.abs(dq) + np.abs(dr) + np.abs(dq + dr)) // 2

    distance = distance.astype(np.int64)

    n_disc = disc_size(MAX_DISC_RADIUS)
    disc = np.full((q.size, n_disc), -1, dtype=np.int64)
    # on an unbounded board, offsets sorted by distance then a fixed order
    offsets = sorted(((dq, dr) for dq in range(-MAX_DISC_RADIUS, MAX_DISC_RADIUS + 1)
                      for dr in range(-MAX_DISC_RADIUS, MAX_DISC_RADIUS + 1)
                      if hex_distance(dq, dr, 0, 0) <= MAX_DISC_RADIUS),
                     key=lambda o: (hex_distance(o[0], o[1], 0, 0), o[1], o[0]))
    for k, (dq, dr) in enumerate(offsets):
        tq, tr = q + dq, r + dr
        ok = (np.abs(tq) <= radius) & (np.abs(tr) <= radius) & (np.abs(tq + tr) <= radius)
        disc[ok, k] = index_of[tq[ok] + radius, tr[ok] + radius]

    for arr in (q, r, index_of, neighbours, distance, disc):
        arr.setflags(write=False)
    return Board(radius, q, r, index_of, neighbours, distance, disc)
