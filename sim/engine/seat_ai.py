"""Per-seat AI settings (issue 16): a skill level (D11: 0 the greedy utility AI, 1 a
lookahead of its orders, 2 a search player; or "random", random legal play, every
decision drawn among its legal options, the ladder's floor: issue 43) and what a seat is forbidden.

An experiment's variant may give `seat_ai = [{ skill = 1 }, { forbid = ["observatory"] },
{}, {}]`: seat index -> settings, `{}` keeping the defaults. The settings stay with
the seat index while personalities rotate over the matches. A forbidden item is
never attempted by the AI (it plans around it) and any rule function a command
or the AI calls refuses it with the reason `forbidden`.

What may be forbidden: any unit or building by name, the mechanics of
sim.rules.codes.MECHANICS (`attack_cities`: attacking or taking a city;
`buy_tiles`; `truce`: a truce with or by the seat; `pact`: joining a pact;
`rush`), and `research:<tech>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.rules.codes import MECHANICS, SKILL_RANDOM, SKILL_RANDOM_NAME, SKILLS
from sim.rules.tables import Tables

KEYS = ("skill", "forbid")


class SeatAIError(ValueError):
    """A seat setting the tables cannot give: one line naming the seat and key."""


def forbid_names(tables: Tables) -> list[str]:
    """Every name a `forbid` list may hold, for messages and documentation."""
    return [*tables.unit_names, *tables.building_names, *MECHANICS,
            *(f"research:{t}" for t in tables.tech_names)]


def check_seat_ai(tables: Tables, seat_ai: Sequence[Mapping[str, Any]] | None,
                  n_seats: int) -> list[dict[str, Any]]:
    """The settings of each of `n_seats` seats, validated and normalised: a list of
    {"skill": int or "random", "forbid": sorted unique names}, defaults for seats not
    given.
    SeatAIError names the seat index, the key and the reason."""
    given = list(seat_ai or [])
    if len(given) > n_seats:
        raise SeatAIError(f"seat_ai: {len(given)} entries for {n_seats} seats")
    known = set(forbid_names(tables))
    out = []
    for s in range(n_seats):
        raw = given[s] if s < len(given) else {}
        if not isinstance(raw, Mapping):
            raise SeatAIError(f"seat_ai[{s}]: a table such as {{ skill = 1 }} expected")
        entry = dict(raw)
        extra = sorted(set(entry) - set(KEYS))
        if extra:
            raise SeatAIError(f"seat_ai[{s}].{extra[0]}: unknown key; use skill or forbid")
        skill = entry.get("skill", 0)
        # random play is named, not numbered: it is no level of D11 (SKILLS)
        if skill != SKILL_RANDOM_NAME and (isinstance(skill, bool) or
                                           not isinstance(skill, int) or skill not in SKILLS):
            raise SeatAIError(f"seat_ai[{s}].skill: {skill!r}; one of "
                              f"{', '.join(map(str, SKILLS))} or {SKILL_RANDOM_NAME!r}")
        forbid = entry.get("forbid", [])
        if not isinstance(forbid, list | tuple) or not all(isinstance(x, str) for x in forbid):
            raise SeatAIError(f"seat_ai[{s}].forbid: a list of names expected")
        for name in forbid:
            if name not in known:
                raise SeatAIError(f"seat_ai[{s}].forbid: unknown {name!r}; a unit or "
                                  f"building name, one of {', '.join(MECHANICS)}, or "
                                  "research:<tech>")
        out.append({"skill": skill, "forbid": sorted(set(forbid))})
    return out


def skill_code(skill: int | str) -> int:
    """The state's code of a seat_ai skill: the level itself, SKILL_RANDOM for "random"."""
    return SKILL_RANDOM if skill == SKILL_RANDOM_NAME else int(skill)


def seat_masks(tables: Tables, settings: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """The state's per-seat fields for validated `settings`: seat_skill and the four
    forbid bit masks (bit i = item i in code order; sim.world.state)."""
    units, buildings = tables.unit_names, tables.building_names
    techs = tables.tech_names
    if max(len(units), len(buildings), len(techs)) > 62:
        raise SeatAIError("forbid masks hold 62 items of a kind; the tables have more")
    masks: dict[str, list[int]] = {k: [] for k in (
        "seat_skill", "seat_forbid_units", "seat_forbid_buildings", "seat_forbid_techs",
        "seat_forbid_mechanics")}
    for entry in settings:
        bits = dict.fromkeys(("u", "b", "t", "m"), 0)
        for name in entry.get("forbid", []):
            if name in units:
                bits["u"] |= 1 << units.index(name)
            elif name in buildings:
                bits["b"] |= 1 << buildings.index(name)
            elif name in MECHANICS:
                bits["m"] |= 1 << MECHANICS.index(name)
            else:
                bits["t"] |= 1 << techs.index(name.removeprefix("research:"))
        masks["seat_skill"].append(skill_code(entry.get("skill", 0)))
        masks["seat_forbid_units"].append(bits["u"])
        masks["seat_forbid_buildings"].append(bits["b"])
        masks["seat_forbid_techs"].append(bits["t"])
        masks["seat_forbid_mechanics"].append(bits["m"])
    return masks


def is_default(settings: Sequence[Mapping[str, Any]] | None) -> bool:
    """No seat has a skill or a forbid (what every match played before issue 16)."""
    return not settings or all(not e.get("skill") and not e.get("forbid") for e in settings)


__all__ = ["SeatAIError", "check_seat_ai", "forbid_names", "is_default", "seat_masks",
           "skill_code"]
