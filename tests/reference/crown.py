"""A plain-Python Crown (../shared/RULES-crown.md), written from the rules and the
validated tables' model (names, not the compiled record), loop by loop, for proving
sim.kernels.crown equal to it. It draws from the same keyed stream (L7) through the hex
reference's plain draw functions, and writes the same event rows, so a whole match can
be compared event for event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sim.rules.crown import (
    ATTACK,
    CLAIM,
    CROWN_SKILL_RANDOM,
    DRAW_AI_TIE,
    DRAW_ORDER_TIE,
    DRAW_RANDOM_ORDER,
    DRAW_ROLL,
    EV_ATTACK,
    EV_ERUPTION,
    EV_FAULT,
    EV_ORDER,
    EV_ROLL,
    EV_ROUND_SCORE,
    ORDERS,
    PASS,
    REINFORCE,
    RISK_SCALE,
    WIDGETS,
    CrownTablesModel,
)
from tests.reference.engine import draw_key, keyed_below

NONE = -1


@dataclass
class Board:
    """owner[name] = "A", "B" or None; tokens[name] = int."""

    owner: dict[str, str | None]
    tokens: dict[str, int]

    def copy(self) -> Board:
        return Board(dict(self.owner), dict(self.tokens))


@dataclass
class Result:
    totals: dict[str, int]
    terms: dict[str, dict[str, int]]
    winner: str | None
    decided_by: str
    fault_leader: str | None
    events: list[tuple[int, ...]] = field(default_factory=list)
    board: Board | None = None


def other(side: str) -> str:
    return "B" if side == "A" else "A"


def lead_and_crown(m: CrownTablesModel, face: int,
                   faces: list[str] | None = None) -> tuple[str, int]:
    """K02, K03, L3 for `face` (1-based) on top of a Core with `faces` (L2: default the
    common Core, m.core.faces)."""
    faces = m.core.faces if faces is None else faces
    widget = faces[face - 1]
    touching = [faces[f - 1] for f in m.core.touches[face - 1]]
    lead = widget
    if widget == "wildcard":
        counts = {kind: touching.count(kind) for kind in m.crown.wildcard.becomes}
        most = max(counts.values())
        if most > 0:
            lead = next(kind for kind in m.crown.wildcard.becomes if counts[kind] == most)
    crown = getattr(m.crown.power, widget) * m.crown.power_multiplier
    crown += m.crown.booster_bonus * touching.count("booster")
    if lead != "wildcard":
        crown += m.crown.same_type_bonus * touching.count(lead)
        if m.crown.wildcard.touching_wildcard_counts:
            crown += m.crown.same_type_bonus * touching.count("wildcard")
    return lead, crown


def beats(m: CrownTablesModel, a: str, b: str) -> bool:
    return [a, b] in m.attack.beats


def zones_of(m: CrownTablesModel) -> list[str]:
    return list(m.map.zones)


def touches_land(m: CrownTablesModel, board: Board, side: str, zone: str) -> bool:
    return any(board.owner[t] == side for t in m.map.zones[zone].touches)


def legal(m: CrownTablesModel, board: Board, side: str, zone: str) -> str:
    """K06: 'claim', 'reinforce', 'attack' or 'pass' (none possible there)."""
    holder = board.owner[zone]
    landed = side in board.owner.values()
    home = m.map.homes[0 if side == "A" else 1]
    if holder is None:
        if touches_land(m, board, side, zone):
            return "claim"
        if not landed and m.orders.home_claim_without_land and zone == home:
            return "claim"
        return "pass"
    if holder == side:
        return "reinforce" if board.tokens[zone] < m.orders.max_tokens else "pass"
    return "attack" if touches_land(m, board, side, zone) else "pass"


def attack_value(m, crown, lead, surge_n, defender_lead, capture_points) -> int:
    """K07."""
    return (crown + m.attack.surge_bonus * surge_n + m.attack.capture_point_bonus * capture_points
            + (m.attack.cycle_bonus if beats(m, lead, defender_lead) else 0))


def defence_value(m, best_crown, best_lead, tokens) -> int:
    """K08."""
    return best_crown + m.defence.token_bonus * tokens + \
        (m.defence.defender_lead_bonus if best_lead == "defender" else 0)


def score(m: CrownTablesModel, board: Board, side: str) -> dict[str, int]:
    """K10: the four terms of `side`'s round score."""
    mine = [z for z in zones_of(m) if board.owner[z] == side]
    per_region = {r: sum(1 for z in mine if m.map.zones[z].region == r) for r in m.map.regions}
    majorities = sum(1 for n in per_region.values() if n >= m.scoring.majority_zones)
    joined = 0
    spanned = sum(1 for n in per_region.values() if n > 0)
    if mine and spanned >= m.scoring.joined_regions:
        seen, todo = {mine[0]}, [mine[0]]
        while todo:
            z = todo.pop()
            for t in m.map.zones[z].touches:
                if board.owner[t] == side and t not in seen:
                    seen.add(t)
                    todo.append(t)
        if len(seen) == len(mine):
            joined = m.scoring.joined_bonus
    return {"zones": len(mine) * m.scoring.per_zone,
            "capture": sum(m.map.capture.get(z, 0) for z in mine),
            "majorities": majorities * m.scoring.majority_bonus, "joined": joined}


def diff(m, board, side) -> int:
    return sum(score(m, board, side).values()) - sum(score(m, board, other(side)).values())


_RISK_CACHE: dict[str, dict[str, list[int]]] = {}


def risk_table(m: CrownTablesModel) -> dict[str, list[int]]:
    """Skill 1's next-wave risk (sim.kernels.crown.next_wave_risk) by brute force over
    every roll of the defending team and of one enemy player (cached per tables)."""
    import itertools

    key = m.model_dump_json()
    if key in _RISK_CACHE:
        return _RISK_CACHE[key]

    faces = [lead_and_crown(m, f) for f in range(1, 13)]
    out = {}
    for i, side in enumerate("AB"):
        n = m.match.team_sizes[i]
        risk = []
        for t in range(m.orders.max_tokens + 1):
            wins = 0
            for team in itertools.product(range(12), repeat=n):
                # the best Crown; equal Crowns: the lowest face (the kernel's ranking)
                best = max(team, key=lambda f: (faces[f][1], -f))
                defence = defence_value(m, faces[best][1], faces[best][0], t)
                wins += sum(1 for e in range(12) if faces[e][1] > defence)
            risk.append(wins * RISK_SCALE // (12 ** n * 12))
        out[side] = risk
    _RISK_CACHE[key] = out
    return out


def threat(m, board, side, risk) -> int:
    return sum(2 * (m.scoring.per_zone + m.map.capture.get(z, 0)) * risk[side][board.tokens[z]]
               for z in zones_of(m)
               if board.owner[z] == side and touches_land(m, board, other(side), z))


def best_roll_counts(m: CrownTablesModel, side: str) -> list[int]:
    """For each face (0-based), the rolls of `side`'s whole team whose best (highest
    Crown; equal Crowns, the lowest face) is that face, by brute force."""
    import itertools

    faces = [lead_and_crown(m, f) for f in range(1, 13)]
    counts = [0] * 12
    for team in itertools.product(range(12), repeat=m.match.team_sizes["AB".index(side)]):
        counts[max(team, key=lambda f: (faces[f][1], -f))] += 1
    return counts


def next_order(m, board, side, known=None) -> int:
    """Skill 1's reply and follow terms (sim.kernels.crown.enemy_reply): the expected
    best immediate gain (× RISK_SCALE) of other(side)'s next order on `board`: a claim,
    or an attack its roll wins. `known`: (its Crown, its lead, its side's Surge by
    region, side's best (Crown, lead) this wave) when it acts later this wave; else the
    next wave's: one roll over the common Core's faces against side's team's best."""
    mover = other(side)
    base = diff(m, board, mover)
    best_claim = 0
    attacks = []
    for z in zones_of(m):
        kind = legal(m, board, mover, z)
        if kind == "claim":
            best_claim = max(best_claim, gain_of(m, board, mover, "claim", z, True, base))
        elif kind == "attack":
            g = gain_of(m, board, mover, "attack", z, True, base)
            if g > 0:
                attacks.append((g, z))
    cp = capture_points(m, board, mover)

    def best_gain(crown, lead, surge_of, d_crown, d_lead) -> int:
        won = [g for g, z in attacks
               if attack_value(m, crown, lead, surge_of(z), d_lead, cp)
               > defence_value(m, d_crown, d_lead, board.tokens[z])]
        return max([best_claim, *won])

    if known is not None:
        crown, lead, surge, (d_crown, d_lead) = known
        return best_gain(crown, lead, lambda z: surge[m.map.zones[z].region], d_crown,
                         d_lead) * RISK_SCALE
    faces = [lead_and_crown(m, f) for f in range(1, 13)]
    counts = best_roll_counts(m, side)
    total = sum(counts[f] * best_gain(faces[e][1], faces[e][0], lambda z: 0, faces[f][1],
                                      faces[f][0])
                for f in range(12) for e in range(12))
    return total * RISK_SCALE // (sum(counts) * 12)


def random_choice(m, stream, turn, p, side, board) -> tuple[str, str | None]:
    """The random level: a legal order or the pass, drawn uniformly (DRAW_RANDOM_ORDER)."""
    legal_orders = [(legal(m, board, side, z), z) for z in zones_of(m)
                    if legal(m, board, side, z) != "pass"]
    pick = keyed_below(draw_key(stream, turn, DRAW_RANDOM_ORDER, p), len(legal_orders) + 1)
    return legal_orders[pick] if pick < len(legal_orders) else ("pass", None)


def capture_points(m, board, side) -> int:
    return sum(1 for z in m.map.capture if board.owner[z] == side)


def gain_of(m, board, side, kind, zone, wins, base) -> int:
    """K14's immediate gain."""
    if kind == "claim" or (kind == "attack" and wins):
        after = board.copy()
        after.owner[zone], after.tokens[zone] = side, 1
        return diff(m, after, side) - base
    return 0


def choose(m, stream, turn, p, side, skill, board, rolls, sides, order, place, surge,
           best, risk) -> tuple[str, str | None]:
    """K14 (sim.kernels.crown.choose_order, from the rules' words)."""
    if skill == CROWN_SKILL_RANDOM:
        return random_choice(m, stream, turn, p, side, board)
    enemy = other(side)
    rival = next((q for q in order[place + 1:] if sides[q] == enemy), None)
    known = None if rival is None else (rolls[rival][1], rolls[rival][0], surge[enemy],
                                        best[side])
    base = diff(m, board, side)
    cp = capture_points(m, board, side)
    scale = 100 * RISK_SCALE
    surge_value = {r: 0 for r in m.map.regions}
    if skill >= 1:
        now = threat(m, board, side, risk)
        for r in m.map.regions:
            for q in order[place + 1:]:
                if sides[q] != side:
                    continue
                without_best = with_best = 0
                for z in zones_of(m):
                    if m.map.zones[z].region != r or board.owner[z] != enemy or \
                            not touches_land(m, board, side, z):
                        continue
                    d = defence_value(m, best[enemy][0], best[enemy][1], board.tokens[z])
                    g = gain_of(m, board, side, "attack", z, True, base)
                    a = attack_value(m, rolls[q][1], rolls[q][0], surge[side][r],
                                     best[enemy][1], cp)
                    if a > d:
                        without_best = max(without_best, g)
                    if a + m.attack.surge_bonus > d:
                        with_best = max(with_best, g)
                surge_value[r] += with_best - without_best
    candidates = []
    for z in zones_of(m):
        kind = legal(m, board, side, z)
        if kind == "pass":
            continue
        wins = False
        region = m.map.zones[z].region
        if kind == "attack":
            a = attack_value(m, rolls[p][1], rolls[p][0], surge[side][region], best[enemy][1], cp)
            wins = a > defence_value(m, best[enemy][0], best[enemy][1], board.tokens[z])
        value = gain_of(m, board, side, kind, z, wins, base) * scale
        if skill >= 1:
            value += m.ai.surge_pct * surge_value[region] * RISK_SCALE
            after = board.copy()
            if kind == "reinforce":
                after.tokens[z] += 1
            elif kind == "claim":
                after.owner[z], after.tokens[z] = side, 1
            elif wins:
                after.owner[z], after.tokens[z] = side, m.orders.attack_places
            value += m.ai.threat_pct * (now - threat(m, after, side, risk))
            value -= m.ai.reply_pct * next_order(m, after, side, known)
            value += m.ai.follow_pct * next_order(m, after, enemy)
        candidates.append((value, kind, z))
    if not candidates:
        return "pass", None
    top = max(v for v, _k, _z in candidates)
    tied = [(k, z) for v, k, z in candidates if v == top]
    return tied[keyed_below(draw_key(stream, turn, DRAW_AI_TIE, p), len(tied))]


def fault_round(m) -> int:
    return math.ceil(m.match.rounds * m.fault.open_at_pct / 100)


def play(m: CrownTablesModel, stream: int, side_skill: tuple[int, int],
         board: Board | None = None) -> Result:
    """A whole match (K04–K13), events in the kernel's rows."""
    zones = zones_of(m)
    if board is None:
        board = Board({z: None for z in zones}, {z: 0 for z in zones})
        for side, home in zip("AB", m.map.homes, strict=True):
            board.owner[home], board.tokens[home] = side, 1
    sides = ["A"] * m.match.team_sizes[0] + ["B"] * m.match.team_sizes[1]
    skill = {"A": side_skill[0], "B": side_skill[1]}
    # L2: each player's Core: its own (core.players, "A1" side A's first) or the common
    cores = [m.core.players.get(f"{s}{sides[:p + 1].count(s)}", m.core.faces)
             for p, s in enumerate(sides)]
    risk = risk_table(m) if max(side_skill) >= 1 else {"A": [0] * 10, "B": [0] * 10}
    totals = {"A": 0, "B": 0}
    terms = {s: {"zones": 0, "capture": 0, "majorities": 0, "joined": 0,
                 "last_round_extra": 0} for s in "AB"}
    events: list[tuple[int, ...]] = []
    fault_leader = None
    z_index = {z: i for i, z in enumerate(zones)}
    for rnd in range(m.match.rounds):
        last = rnd == m.match.rounds - 1
        for wave in range(m.match.waves):
            turn = rnd * m.match.waves + wave
            rolls = []
            for p in range(len(sides)):
                face = keyed_below(draw_key(stream, turn, DRAW_ROLL, p), 12) + 1
                lead, crown = lead_and_crown(m, face, cores[p])
                rolls.append((lead, crown))
                events.append((EV_ROLL, rnd, wave, p, face - 1, crown, WIDGETS.index(lead)))
            ties = [draw_key(stream, turn, DRAW_ORDER_TIE, p) for p in range(len(sides))]
            order = sorted(range(len(sides)), key=lambda p: (-rolls[p][1], -ties[p], p))
            best = {}
            for s in "AB":
                mine = [p for p in order if sides[p] == s]
                top = max(rolls[p][1] for p in mine)
                first = next(p for p in mine if rolls[p][1] == top)
                best[s] = (top, rolls[first][0])
            surge = {s: {r: 0 for r in m.map.regions} for s in "AB"}
            for place, p in enumerate(order):
                side = sides[p]
                kind, z = choose(m, stream, turn, p, side, skill[side], board, rolls, sides,
                                 order, place, surge, best, risk)
                events.append((EV_ORDER, rnd, wave, p, NONE if z is None else z_index[z],
                               ORDERS.index(kind), place))
                if kind == "pass":
                    continue
                region = m.map.zones[z].region
                if kind == "claim":
                    board.owner[z], board.tokens[z] = side, 1
                elif kind == "reinforce":
                    board.tokens[z] += 1
                else:
                    enemy = other(side)
                    a = attack_value(m, rolls[p][1], rolls[p][0], surge[side][region],
                                     best[enemy][1], capture_points(m, board, side))
                    d = defence_value(m, best[enemy][0], best[enemy][1], board.tokens[z])
                    if a > d:  # K09
                        board.owner[z], board.tokens[z] = side, m.orders.attack_places
                    events.append((EV_ATTACK, rnd, wave, p, z_index[z], a, d))
                surge[side][region] += 1
        if last and fault_round(m) > 0:
            _fault(m, board, m.fault.eruption_tokens, events, EV_ERUPTION, rnd, z_index)
        for i, s in enumerate("AB"):
            t = score(m, board, s)
            for k, v in t.items():
                terms[s][k] += v
            points = sum(t.values())
            if last:
                terms[s]["last_round_extra"] += points * (m.match.last_round_multiplier - 1)
                points *= m.match.last_round_multiplier
            totals[s] += points
            events.append((EV_ROUND_SCORE, rnd, -1, i, NONE, points, totals[s]))
        if rnd + 1 == fault_round(m):
            if totals["A"] != totals["B"]:
                fault_leader = "A" if totals["A"] > totals["B"] else "B"
            if not last:
                _fault(m, board, m.fault.fault_tokens, events, EV_FAULT, rnd, z_index)
    held = {s: sum(1 for z in zones if board.owner[z] == s) for s in "AB"}
    majorities = {s: _majority_count(m, board, s) for s in "AB"}
    winner, how = None, "draw"
    for name, values in (("points", totals), ("zones", held), ("majorities", majorities)):
        if values["A"] != values["B"]:
            winner, how = ("A" if values["A"] > values["B"] else "B"), name
            break
    return Result(totals, terms, winner, how, fault_leader, events, board)


def _majority_count(m, board, side) -> int:
    return sum(1 for r in m.map.regions
               if sum(1 for z in zones_of(m) if m.map.zones[z].region == r
                      and board.owner[z] == side) >= m.scoring.majority_zones)


def _fault(m, board, n, events, kind, rnd, z_index) -> None:
    """L6: n tokens off every fault zone held; emptied zones become empty."""
    for z in zones_of(m):
        if z in m.fault.zones and board.owner[z] is not None:
            before = board.tokens[z]
            board.tokens[z] = max(before - n, 0)
            if board.tokens[z] == 0:
                board.owner[z] = None
            if before != board.tokens[z]:
                events.append((kind, rnd, -1, NONE, z_index[z], before - board.tokens[z],
                               board.tokens[z]))


__all__ = ["ATTACK", "CLAIM", "PASS", "REINFORCE", "Board", "Result", "lead_and_crown", "play"]
