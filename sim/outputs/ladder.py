"""What a ladder file says (issue 43): its agents and the pairings a ladder sweep plays.

A ladder (`sim ladder FILE`) is a sweep whose variants are the pairings of its agents:
every pair of agents, in both seat orders, on the same seeded matches. The file's
`[ladder]` section is read here, in the outputs layer, because both the runner that
plays the pairings (sim.runner.ladder) and the analysis that reads them back from a
run's provenance (sim.analysis.ladder) need the same agents and the same pairings:

    name = "ladder-skills"
    tables = "tables/default.toml"
    [ladder]
    agents = ["random", "skill-0", "skill-1", "skill-2",
              { name = "no-walls", forbid = ["walls"] }]
    seats = 2              # 2, 3, 4 or 6; a pairing alternates its two agents over the seats
    matches = 200          # per pairing and seat order: a pair plays 2 × matches
    seed = 20261243
    length = "standard"

An agent is "skill-0", "skill-1", "skill-2", "random" (random legal play,
sim.kernels.ai.random_play), or a table with a name and seat_ai settings (`skill`,
`forbid`: sim.engine.seat_ai). The ladder's rungs, whose order the monotone verdict
checks (each beats the one before it), are the agents without a forbid, in the order
listed: list them weakest first.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sim.outputs.folders import name_problem
from sim.rules.codes import SKILL_RANDOM, SKILL_RANDOM_NAME, SKILLS

# "skill-N" names agent N of D11; the separator of a pairing's variant name
_SKILL_NAME = re.compile(r"skill-(\d+)")
VS = ".vs."


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AgentSpec(_M):
    """One agent of a ladder: a name and the seat_ai settings every seat it plays gets."""

    name: str
    skill: int | str = 0
    forbid: list[str] = []

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if (why := name_problem(value, "agent")) is not None:
            raise ValueError(why)
        if VS in value:
            raise ValueError(f"agent name {value!r} holds {VS!r}, which separates a "
                             "pairing's two agents")
        return value

    @property
    def skill_code(self) -> int:
        """The state's skill code (SKILL_RANDOM for "random")."""
        return SKILL_RANDOM if self.skill == SKILL_RANDOM_NAME else int(self.skill)

    @property
    def seat_ai(self) -> dict[str, Any]:
        """The seat_ai entry of a seat this agent plays."""
        out: dict[str, Any] = {"skill": self.skill}
        if self.forbid:
            out["forbid"] = list(self.forbid)
        return out

    @property
    def rung(self) -> bool:
        """Whether it is a rung of the ladder (no forbid: a level of play)."""
        return not self.forbid


def agent_of(value: str | dict[str, Any]) -> AgentSpec:
    """An AgentSpec from a ladder's `agents` entry: "skill-N", "random" or a table.
    ValueError names what is wrong."""
    if isinstance(value, str):
        if value == SKILL_RANDOM_NAME:
            return AgentSpec(name=value, skill=SKILL_RANDOM_NAME)
        hit = _SKILL_NAME.fullmatch(value)
        if hit is None:
            raise ValueError(f"agent {value!r}: \"skill-N\", {SKILL_RANDOM_NAME!r} or a "
                             "table such as { name = \"no-walls\", forbid = [\"walls\"] }")
        return AgentSpec(name=value, skill=int(hit.group(1)))
    return AgentSpec.model_validate(value)


class LadderSpec(_M):
    """The `[ladder]` section (module docstring)."""

    agents: Annotated[list[str | dict[str, Any]], Field(min_length=2)]
    seats: Annotated[int, Field(ge=2, le=6)] = 2
    matches: Annotated[int, Field(ge=1, le=1_000_000)]
    seed: Annotated[int, Field(ge=0, lt=2**63)]
    length: str | None = None
    chunk_size: Annotated[int, Field(ge=1, le=100_000)] = 50

    @field_validator("agents")
    @classmethod
    def _agents(cls, value: list) -> list:
        agents = [agent_of(v) for v in value]
        names = [a.name.lower() for a in agents]
        if len(set(names)) < len(names):
            raise ValueError("two agents share a name (letter case aside)")
        for a in agents:
            if a.skill != SKILL_RANDOM_NAME and (isinstance(a.skill, str)
                                                 or a.skill not in SKILLS):
                raise ValueError(f"agent {a.name}: skill {a.skill!r}; one of "
                                 f"{', '.join(map(str, SKILLS))} or {SKILL_RANDOM_NAME!r}")
        settings = [(a.skill_code, tuple(sorted(set(a.forbid)))) for a in agents]
        if len(set(settings)) < len(settings):
            raise ValueError("two agents play the same settings: a pairing of them "
                             "measures nothing")
        return value

    @property
    def agent_specs(self) -> list[AgentSpec]:
        return [agent_of(v) for v in self.agents]


def seat_agents(first: str, second: str, seats: int) -> list[str]:
    """The agent of each seat of a pairing: `first` at the even seats, `second` at the
    odd ones (2 seats: first at seat 0)."""
    return [first if s % 2 == 0 else second for s in range(seats)]


def pairings(spec: LadderSpec) -> list[tuple[str, list[str]]]:
    """(variant name, agent of each seat) of every pairing the ladder plays: each pair
    of agents in the order listed, then the same pair with its seats swapped. Pure:
    the runner plays these and the analysis reads them back."""
    names = [a.name for a in spec.agent_specs]
    out = []
    for a, b in itertools.combinations(names, 2):
        out.append((f"{a}{VS}{b}", seat_agents(a, b, spec.seats)))
        out.append((f"{b}{VS}{a}", seat_agents(b, a, spec.seats)))
    return out


def ladder_of_text(text: str) -> LadderSpec | None:
    """The `[ladder]` section of an experiment or ladder file's text (as a run's
    provenance keeps it), or None when it has none or it does not parse."""
    try:
        raw = tomllib.loads(text).get("ladder")
        return LadderSpec.model_validate(raw) if isinstance(raw, dict) else None
    except (tomllib.TOMLDecodeError, ValueError):
        return None


__all__ = ["VS", "AgentSpec", "LadderSpec", "agent_of", "ladder_of_text", "pairings",
           "seat_agents"]
