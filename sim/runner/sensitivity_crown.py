"""Crown's hooks for `sim sensitivity` and `sim tune` (issue 48 item 1; named by
sim.outputs.games.CROWN.study_runner, the hex game's being sim.runner.sensitivity).

A Crown match reads its tables only through the compiled record (sim.rules.crown:
`CrownTables.record`) and the side skills, so the record's bytes key what a moved
value plays: two values with the same record play the same matches (a capture value
of a zone that does not exist cannot differ, and a weight of skill 1 is read, yet
the record holds it, so it plays). A value is checked by the tables' own
validation (schema ranges and cross-checks, `file:line: key: reason`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from sim.outputs.games import CROWN
from sim.rules.tables import TablesError


def overrides_at(base: Any, overrides: dict[str, Any], seats: int | None,
                 length: str | None) -> tuple[Any, str | None]:
    """(Crown tables `base` with `overrides`, None) or (None, the tables' reason for
    refusing them: a value outside its range, a cross-check). Crown has no seats or
    length presets: `seats` and `length` are always None (spec_problems)."""
    try:
        return base.with_overrides(overrides), None
    except TablesError as exc:
        return None, exc.errors[0].split(": ", 1)[-1] if exc.errors else str(exc)


def play_key(tables: Any, seats: int | None, length: str | None,
             personalities: list[str] | None) -> str:
    """A digest of the compiled record a Crown match of `tables` plays from: equal
    digests play equal matches from the same streams (L7)."""
    return hashlib.sha256(np.asarray(tables.record).tobytes()).hexdigest()


def spec_problems(spec: Any, tables: Any) -> list[tuple[tuple, str]]:
    """A Crown sensitivity or tune file's settings the game refuses: the hex game's
    seats, length and personalities (team sizes are the tables' `match.team_sizes`),
    and side skills that are not two of Crown's AI levels."""
    problems: list[tuple[tuple, str]] = [
        ((name,), "the hex game's setting; Crown's team sizes are the tables' "
         "match.team_sizes (use `set`)")
        for name in ("seats", "length", "personalities") if getattr(spec, name) is not None]
    skills = spec.side_skill
    if skills is not None and (len(skills) != 2 or any(k not in CROWN.ai_levels
                                                       for k in skills)):
        problems.append((("side_skill",), "two AI skills, side A's and side B's, each one "
                         f"of {', '.join(map(str, CROWN.ai_levels))}; got {skills}"))
    return problems
