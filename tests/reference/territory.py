"""Plain-Python oracle for territory and score (T01–T16, B2).

Written loop by loop from the rule text, on axial coordinates and dicts, with
no numpy and nothing shared with the kernels, so that agreement means the
kernels implement the rules and not merely themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def hex_distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def board_tiles(radius: int) -> list[tuple[int, int]]:
    return [(q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
            if abs(q) <= radius and abs(r) <= radius and abs(q + r) <= radius]


@dataclass
class City:
    id: int
    owner: int | str          # seat index, or "neutral"
    at: tuple[int, int]
    pop: int
    buildings: list[str] = field(default_factory=list)


@dataclass
class Rules:
    ring_radius: int = 1
    grown_ring_radius: int = 2
    grown_ring_population: int = 3
    w_region: int = 1
    w_population: int = 3
    w_city: int = 10
    gold_per_point: int = 5
    tile_price_first: int = 6
    tile_price_step: int = 3
    monument_points: dict[str, int] = field(default_factory=lambda: {"monument": 12})


def tile_owners(radius: int, cities: list[City], bought: dict[tuple[int, int], int],
                rules: Rules) -> dict[tuple[int, int], int]:
    """T01, T03, T05, T06, T08: which city owns each tile (absent = nobody)."""
    by_id = {c.id: c for c in cities}
    owners: dict[tuple[int, int], int] = {}
    for tile in board_tiles(radius):
        # 1. a bought tile beats a ring (T08.1); it stays its buyer's (T05)
        if tile in bought and bought[tile] in by_id:
            owners[tile] = bought[tile]
            continue
        # 2. otherwise the closest city whose ring covers it; 3. ties to lower ID
        candidates = []
        for city in cities:
            if city.owner == "neutral":
                continue  # a village has no region (T06)
            ring = rules.grown_ring_radius if city.pop >= rules.grown_ring_population \
                else rules.ring_radius
            d = hex_distance(city.at, tile)
            if d <= ring:
                candidates.append((d, city.id))
        if candidates:
            owners[tile] = min(candidates)[1]
    return owners


def score_table(radius: int, cities: list[City], bought: dict[tuple[int, int], int],
                gold: list[int], alive: list[bool], rules: Rules) -> list[dict]:
    """T10–T14, T11: per seat the terms, score and rank."""
    owners = tile_owners(radius, cities, bought, rules)
    by_id = {c.id: c for c in cities}
    rows = []
    for seat in range(len(gold)):
        mine = [c for c in cities if c.owner == seat]
        region = sum(1 for cid in owners.values() if by_id[cid].owner == seat)
        population = sum(c.pop for c in mine)
        monuments = sum(rules.monument_points.get(b, 0) for c in mine for b in c.buildings)
        terms = {
            "region": region * rules.w_region,
            "population": population * rules.w_population,
            "cities": len(mine) * rules.w_city,
            "gold": max(gold[seat], 0) // rules.gold_per_point,
            "monuments": monuments,
        }
        rows.append({"seat": seat, "terms": terms, "score": sum(terms.values()),
                     "region_tiles": region, "population": population, "gold": gold[seat],
                     "alive": alive[seat]})
    order = sorted(rows, key=lambda row: (not row["alive"], -row["score"], -row["population"],
                                          -row["region_tiles"], -row["gold"], row["seat"]))
    for rank, row in enumerate(order, start=1):
        row["rank"] = rank
    return rows


def node_yields(radius: int, cities: list[City], bought: dict[tuple[int, int], int],
                nodes: dict[tuple[int, int], int], node_yield: list[int],
                rules: Rules) -> dict[int, list[int]]:
    """T02, T09: yields of resource nodes per city, each node counted once."""
    owners = tile_owners(radius, cities, bought, rules)
    out = {c.id: [0, 0, 0] for c in cities}
    for tile, kind in nodes.items():
        if tile in owners:
            out[owners[tile]][kind] += node_yield[kind]
    return out


def can_buy(radius: int, cities: list[City], bought: dict[tuple[int, int], int],
            impassable: set[tuple[int, int]], city_id: int, seat: int, tile: tuple[int, int],
            gold: int, rules: Rules) -> tuple[str, int]:
    """T04, B2: ("ok", price) or (reason, price)."""
    by_id = {c.id: c for c in cities}
    city = by_id.get(city_id)
    if city is None:
        return "no_city", 0
    if city.owner == "neutral":
        return "neutral", 0
    if city.owner != seat:
        return "not_owner", 0
    price = rules.tile_price_first + rules.tile_price_step * sum(
        1 for cid in bought.values() if cid == city_id)
    if tile in impassable:
        return "impassable", price
    owners = tile_owners(radius, cities, bought, rules)
    if tile in owners:
        return "in_region", price
    neighbours = [(tile[0] + dq, tile[1] + dr)
                  for dq, dr in ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))]
    if not any(owners.get(n) == city_id for n in neighbours):
        return "not_adjacent", price
    if gold < price:
        return "no_gold", price
    return "ok", price
