"""Crown scenarios (docs/crown-scenarios.md): a position, some commands, the resulting
state. A command goes through the same kernels a match plays (sim.kernels.crown); a
command the rules forbid is refused with its reason and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.engine.crown import crown_stream, roll_scoring
from sim.kernels.crown import (
    attack_total,
    capture_points_held,
    choose_order,
    crown_of,
    crown_on,
    defence_total,
    fault_loss,
    has_land,
    lead_of,
    lead_on,
    order_on,
    resolve_attack,
    roll_face,
    side_score,
    wave_order,
)
from sim.rules.crown import (
    ATTACK,
    CLAIM,
    CROWN_SKILLS,
    EF_A,
    EF_B,
    EF_ZONE,
    EMPTY,
    EVENTS,
    MAX_CANDIDATES,
    MAX_PLAYERS,
    MAX_REGIONS,
    MAX_TOKENS,
    MAX_ZONES,
    N_CANDIDATE_FIELDS,
    N_EVENT_FIELDS,
    N_FACES,
    N_NEXT_WAVE_ROWS,
    N_SCORE_TERMS,
    N_SIDES,
    ORDERS,
    PASS,
    REINFORCE,
    SCORE_TERMS,
    SIDES,
    WIDGETS,
    WORK_SIZE,
    CrownTables,
    load_crown_tables,
)
from sim.rules.tables import TablesError
from sim.rules.tomlpos import key_lines, line_of, read_toml, validation_problems

COMMANDS = ("roll", "claim", "reinforce", "attack", "pass", "ai", "next_wave",
            "score_round", "fault", "eruption")


class CrownScenarioError(Exception):
    """A malformed Crown scenario: one line per problem, `file:line: key: reason`."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ZoneSpec(_Model):
    zone: str
    side: Literal["A", "B"]
    tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 1


class RollSpec(_Model):
    player: Annotated[int, Field(ge=0, lt=MAX_PLAYERS)]
    face: Annotated[int, Field(ge=1, le=N_FACES)]


class CommandSpec(_Model):
    do: Literal["roll", "claim", "reinforce", "attack", "pass", "ai", "next_wave",
                "score_round", "fault", "eruption"]
    player: Annotated[int, Field(ge=0, lt=MAX_PLAYERS)] | None = None
    zone: str | None = None
    face: Annotated[int, Field(ge=1, le=N_FACES)] | None = None
    skill: int = 0


class ScenarioSpec(_Model):
    name: str = ""
    seed: Annotated[int, Field(ge=0)] = 1
    round: Annotated[int, Field(ge=1)] = 1
    wave: Annotated[int, Field(ge=1)] = 1
    totals: Annotated[list[int], Field(min_length=N_SIDES, max_length=N_SIDES)] = [0, 0]
    overrides: dict[str, Any] = {}
    zones: list[ZoneSpec] = []
    rolls: list[RollSpec] = []
    commands: list[CommandSpec] = []


@dataclass
class CrownScenario:
    """A scenario's tables and position: owner, tokens (MAX_ZONES,); this wave's faces,
    Crowns, leads (MAX_PLAYERS,); who acted; each side's Surge by region."""

    name: str
    tables: CrownTables
    seed: int
    rnd: int                  # 0-based
    wave: int                 # 0-based
    totals: list[int]
    owner: np.ndarray
    tokens: np.ndarray
    face: np.ndarray
    crown: np.ndarray
    lead: np.ndarray
    acted: list[bool]
    surge: np.ndarray
    commands: list[CommandSpec]
    events: list[dict] = field(default_factory=list)

    @property
    def n_players(self) -> int:
        return sum(self.tables.model.match.team_sizes)

    def side_of(self, player: int) -> int:
        return 0 if player < self.tables.model.match.team_sizes[0] else 1


def load_crown_scenario(path: str | Path, tables_path: str | Path | None = None) -> CrownScenario:
    """Parse and validate a Crown scenario and build its position; every problem is a
    CrownScenarioError line `file:line: key: reason`."""
    path = Path(path)
    text, raw = read_toml(path, CrownScenarioError)
    lines = key_lines(text)
    try:
        spec = ScenarioSpec.model_validate(raw)
    except ValidationError as exc:
        raise CrownScenarioError("\n".join(validation_problems(exc.errors(), path, lines))) \
            from None
    try:
        tables = load_crown_tables(tables_path, spec.overrides)
    except TablesError as exc:
        line = line_of(lines, ("overrides",))
        raise CrownScenarioError("\n".join(f"{path}:{line}: overrides: {e}"
                                           for e in exc.errors)) from None
    problems = _spec_problems(spec, tables)
    if problems:
        raise CrownScenarioError("\n".join(
            f"{path}:{line_of(lines, key) or '?'}: {'.'.join(map(str, key))}: {reason}"
            for key, reason in problems))
    return _build(spec, tables)


def _spec_problems(spec: ScenarioSpec, tables: CrownTables) -> list[tuple[tuple, str]]:
    m = tables.model
    names = tables.zone_names
    players = sum(m.match.team_sizes)
    out: list[tuple[tuple, str]] = []
    if spec.round > m.match.rounds:
        out.append((("round",), f"the match has {m.match.rounds} rounds"))
    if spec.wave > m.match.waves:
        out.append((("wave",), f"a round has {m.match.waves} waves"))
    seen = set()
    for i, z in enumerate(spec.zones):
        if z.zone not in names:
            out.append((("zones", i, "zone"), f"unknown zone {z.zone!r}; zones: "
                        f"{', '.join(names)}"))
        elif z.zone in seen:
            out.append((("zones", i, "zone"), f"zone {z.zone} listed twice"))
        seen.add(z.zone)
        if z.tokens > m.orders.max_tokens:
            out.append((("zones", i, "tokens"), f"a zone holds at most {m.orders.max_tokens}"))
    for i, r in enumerate(spec.rolls):
        if r.player >= players:
            out.append((("rolls", i, "player"), f"the match has players 0 to {players - 1}"))
    for i, c in enumerate(spec.commands):
        needs_player = c.do in ("roll", "claim", "reinforce", "attack", "pass", "ai")
        if needs_player and c.player is None:
            out.append((("commands", i), f"{c.do} needs a player"))
        if c.player is not None and c.player >= players:
            out.append((("commands", i, "player"), f"the match has players 0 to {players - 1}"))
        if c.do in ("claim", "reinforce", "attack"):
            if c.zone is None:
                out.append((("commands", i), f"{c.do} needs a zone"))
            elif c.zone not in names:
                out.append((("commands", i, "zone"), f"unknown zone {c.zone!r}"))
        if c.do == "roll" and c.face is None:
            out.append((("commands", i), "roll needs a face (1 to 12)"))
        if c.do == "ai" and c.skill not in CROWN_SKILLS:
            out.append((("commands", i, "skill"), f"one of {CROWN_SKILLS}"))
    return out


def _build(spec: ScenarioSpec, tables: CrownTables) -> CrownScenario:
    names = tables.zone_names
    owner = np.full(MAX_ZONES, EMPTY, dtype=np.int64)
    tokens = np.zeros(MAX_ZONES, dtype=np.int64)
    for z in spec.zones:
        owner[names.index(z.zone)] = SIDES.index(z.side)
        tokens[names.index(z.zone)] = z.tokens
    scn = CrownScenario(
        name=spec.name, tables=tables, seed=spec.seed, rnd=spec.round - 1, wave=spec.wave - 1,
        totals=list(spec.totals), owner=owner, tokens=tokens,
        face=np.zeros(MAX_PLAYERS, dtype=np.int64), crown=np.zeros(MAX_PLAYERS, dtype=np.int64),
        lead=np.zeros(MAX_PLAYERS, dtype=np.int64), acted=[False] * MAX_PLAYERS,
        surge=np.zeros((N_SIDES, MAX_REGIONS), dtype=np.int64), commands=spec.commands)
    _roll_wave(scn)
    for r in spec.rolls:
        _set_face(scn, r.player, r.face - 1)
    return scn


def _turn(scn: CrownScenario) -> np.int64:
    return np.int64(scn.rnd * scn.tables.model.match.waves + scn.wave)


def _set_face(scn: CrownScenario, player: int, face: int) -> None:
    rec = scn.tables.record
    scn.face[player] = face
    # L2: the player's own Core (the common one unless a table gives it another)
    scn.crown[player] = crown_on(rec, rec.player_face_widget[player], np.int64(face))
    scn.lead[player] = lead_on(rec, rec.player_face_widget[player], np.int64(face))


def _roll_wave(scn: CrownScenario) -> None:
    """Every player's roll for the current wave from the scenario's stream (L7)."""
    stream = crown_stream(scn.seed, 0)
    for p in range(scn.n_players):
        _set_face(scn, p, int(roll_face(stream, _turn(scn), np.int64(p))))


def _best(scn: CrownScenario) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(wave order, best Crown by side, its lead) of the current rolls (K05, K08)."""
    order = np.zeros(MAX_PLAYERS, dtype=np.int64)
    wave_order(crown_stream(scn.seed, 0), _turn(scn), scn.crown, np.int64(scn.n_players),
               order, np.zeros(MAX_PLAYERS, dtype=np.uint64))
    best_crown = np.full(N_SIDES, -1, dtype=np.int64)
    best_lead = np.zeros(N_SIDES, dtype=np.int64)
    for q in order[: scn.n_players]:
        side = scn.side_of(int(q))
        if scn.crown[q] > best_crown[side]:
            best_crown[side], best_lead[side] = scn.crown[q], scn.lead[q]
    return order, best_crown, best_lead


def _give(scn: CrownScenario, player: int, kind: int, zone: int) -> tuple[str | None, dict]:
    """K06–K09: `player`'s order `kind` on `zone` (EMPTY for a pass); (refusal, details)."""
    rec, names = scn.tables.record, scn.tables.zone_names
    if scn.acted[player]:
        return f"player {player} has already acted this wave", {}
    side = scn.side_of(player)
    if kind != PASS:
        landed = has_land(rec, scn.owner, np.int64(side))
        legal = order_on(rec, scn.owner, scn.tokens, np.int64(side), np.int64(zone), landed)
        if legal != kind:
            return _refusal(scn, side, kind, zone, names[zone]), {}
    details: dict = {}
    region = int(rec.zone_region[zone]) if kind != PASS else -1
    if kind == CLAIM:
        scn.owner[zone], scn.tokens[zone] = side, 1
    elif kind == REINFORCE:
        scn.tokens[zone] += 1
    elif kind == ATTACK:
        _order, best_crown, best_lead = _best(scn)
        enemy = 1 - side
        cp = capture_points_held(rec, scn.owner, np.int64(side))
        attack = attack_total(rec, scn.crown[player], scn.lead[player],
                              scn.surge[side, region], best_lead[enemy], cp)
        defence = defence_total(rec, best_crown[enemy], best_lead[enemy], scn.tokens[zone])
        won = resolve_attack(rec, scn.owner, scn.tokens, np.int64(side), np.int64(zone),
                             attack, defence)
        details = {"attack": int(attack), "defence": int(defence), "won": bool(won)}
        scn.events.append({"kind": "attack", "round": scn.rnd + 1, "wave": scn.wave + 1,
                           "player": player, "zone": names[zone], **details})
    if kind != PASS:
        scn.surge[side, region] += 1
    scn.acted[player] = True
    return None, details


def _refusal(scn: CrownScenario, side: int, kind: int, zone: int, name: str) -> str:
    """Why `side` cannot give order `kind` on `zone`, in the page's words."""
    holder = int(scn.owner[zone])
    if kind == CLAIM and holder != EMPTY:
        return f"claim {name}: the zone is not empty"
    if kind == REINFORCE and holder != side:
        return f"reinforce {name}: not your side's zone"
    if kind == REINFORCE:
        return f"reinforce {name}: it holds {scn.tables.model.orders.max_tokens} tokens already"
    if kind == ATTACK and holder in (EMPTY, side):
        return f"attack {name}: not an enemy zone"
    return f"{ORDERS[kind]} {name}: not next to your side's land"


def run_crown_scenario(scn: CrownScenario) -> dict:
    """Apply the scenario's commands in order and return the report
    (docs/crown-scenarios.md)."""
    rec, m, names = scn.tables.record, scn.tables.model, scn.tables.zone_names
    results = []
    for index, cmd in enumerate(scn.commands):
        error: str | None = None
        details: dict = {}
        if cmd.do == "roll":
            _set_face(scn, cmd.player, cmd.face - 1)
        elif cmd.do in ("claim", "reinforce", "attack", "pass"):
            kind = ORDERS.index(cmd.do)
            zone = names.index(cmd.zone) if cmd.zone is not None else EMPTY
            error, details = _give(scn, cmd.player, kind, zone)
        elif cmd.do == "ai":
            error, details = _ai(scn, cmd.player, cmd.skill)
        elif cmd.do == "next_wave":
            scn.wave += 1
            if scn.wave == m.match.waves:
                scn.wave = 0
                scn.rnd = min(scn.rnd + 1, m.match.rounds - 1)
            scn.acted = [False] * MAX_PLAYERS
            scn.surge[:] = 0
            _roll_wave(scn)
        elif cmd.do == "score_round":
            last = scn.rnd == m.match.rounds - 1
            terms = np.zeros(N_SCORE_TERMS, dtype=np.int64)
            work = np.zeros(WORK_SIZE, dtype=np.int64)
            for side in range(N_SIDES):
                points = int(side_score(rec, scn.owner, np.int64(side), terms, work))
                points *= m.match.last_round_multiplier if last else 1
                scn.totals[side] += points
                scn.events.append({"kind": "round_score", "round": scn.rnd + 1,
                                   "side": SIDES[side], "points": points,
                                   "total": scn.totals[side]})
        else:  # fault, eruption (L6)
            n = m.fault.fault_tokens if cmd.do == "fault" else m.fault.eruption_tokens
            events = np.zeros((MAX_ZONES, N_EVENT_FIELDS), dtype=np.int64)
            count = fault_loss(rec, scn.owner, scn.tokens, np.int64(n), events, np.int64(0),
                           np.int64(EVENTS.index(cmd.do)), np.int64(scn.rnd))
            for row in events[:count]:
                scn.events.append({"kind": cmd.do, "round": scn.rnd + 1,
                                   "zone": names[row[EF_ZONE]], "lost": int(row[EF_A]),
                                   "left": int(row[EF_B])})
        results.append({"index": index, "do": cmd.do, "ok": error is None, "error": error,
                        **details})
    return _report(scn, results)


def _ai(scn: CrownScenario, player: int, skill: int) -> tuple[str | None, dict]:
    """K14: the AI's order for `player` at `skill` now, given as if by the player."""
    if scn.acted[player]:
        return f"player {player} has already acted this wave", {}
    rec = scn.tables.record
    order, best_crown, best_lead = _best(scn)
    place = int(np.flatnonzero(order[: scn.n_players] == player)[0])
    side = scn.side_of(player)
    player_side = np.array([scn.side_of(p) if p < scn.n_players else 0
                            for p in range(MAX_PLAYERS)], dtype=np.int64)
    risk = np.zeros((N_SIDES, MAX_TOKENS + 1), dtype=np.int64)
    next_wave = np.zeros((N_NEXT_WAVE_ROWS, N_FACES), dtype=np.int64)
    if skill >= 1:
        from sim.kernels.crown import next_wave_risk, next_wave_rolls

        face_crown = np.array([crown_of(rec, np.int64(f)) for f in range(N_FACES)])
        face_lead = np.array([lead_of(rec, np.int64(f)) for f in range(N_FACES)])
        next_wave_risk(rec, face_crown, face_lead, risk)
        next_wave_rolls(rec, face_crown, face_lead, next_wave)
    chosen = np.zeros(2, dtype=np.int64)
    choose_order(rec, crown_stream(scn.seed, 0), _turn(scn), np.int64(player),
                 np.int64(side), np.int64(skill), scn.owner, scn.tokens, scn.crown, scn.lead,
                 player_side, order, np.int64(place), np.int64(scn.n_players), scn.surge,
                 best_crown, best_lead, risk, next_wave, chosen,
                 np.zeros(N_SCORE_TERMS, dtype=np.int64), np.zeros(WORK_SIZE, dtype=np.int64),
                 np.zeros(MAX_REGIONS, dtype=np.int64),
                 np.zeros((N_CANDIDATE_FIELDS, MAX_CANDIDATES), dtype=np.int64))
    kind, zone = int(chosen[0]), int(chosen[1])
    error, details = _give(scn, player, kind, zone)
    return error, {"order": ORDERS[kind],
                   "zone": scn.tables.zone_names[zone] if zone != EMPTY else None, **details}


def _report(scn: CrownScenario, commands: list[dict]) -> dict:
    rec, m, names = scn.tables.record, scn.tables.model, scn.tables.zone_names
    _order, best_crown, best_lead = _best(scn)
    terms = np.zeros(N_SCORE_TERMS, dtype=np.int64)
    work = np.zeros(WORK_SIZE, dtype=np.int64)
    sides = []
    for side in range(N_SIDES):
        score = int(side_score(rec, scn.owner, np.int64(side), terms, work))
        sides.append({
            "side": SIDES[side], "total": scn.totals[side],
            "zones": int((scn.owner[: len(names)] == side).sum()),
            "capture_points": int(capture_points_held(rec, scn.owner, np.int64(side))),
            "best_crown": int(best_crown[side]), "best_lead": WIDGETS[best_lead[side]],
            "round_score": score,
            "score_terms": {SCORE_TERMS[k]: int(terms[k]) for k in range(N_SCORE_TERMS - 1)},
            "surge": {r: int(scn.surge[side, i]) for i, r in enumerate(m.map.regions)}})
    return {
        "name": scn.name, "round": scn.rnd + 1, "wave": scn.wave + 1,
        "zones": [{"zone": n, "region": m.map.zones[n].region,
                   "side": SIDES[scn.owner[i]] if scn.owner[i] != EMPTY else None,
                   "tokens": int(scn.tokens[i]), "capture": m.map.capture.get(n, 0),
                   "fault": n in m.fault.zones} for i, n in enumerate(names)],
        "players": [{"player": p, "side": SIDES[scn.side_of(p)], "face": int(scn.face[p]) + 1,
                     "lead": WIDGETS[scn.lead[p]], "crown": int(scn.crown[p]),
                     "acted": scn.acted[p],
                     "scoring": roll_scoring(scn.tables, int(scn.face[p]) + 1)}
                    for p in range(scn.n_players)],
        "sides": sides, "commands": commands, "events": scn.events}
