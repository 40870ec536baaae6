"""Running a scenario: its commands through the same rule kernels a match uses,
refusals in a designer's words, and the SCENARIOS.md report.
"""

from __future__ import annotations

import contextlib
from typing import Any

from sim.engine.commands import (
    COMMANDS,
    REASON_TEXT,
    item_name,
    owner_name,
    run_command,
)
from sim.engine.report import state_report
from sim.engine.scenario.spec import (
    CommandSpec,
    Scenario,
)
from sim.rules import codes as R
from sim.rules.codes import (
    NEUTRAL,
)
from sim.world.state import (
    State,
    copy_state,
)


def command_args(scn: Scenario, cmd: CommandSpec) -> tuple[int, int, int]:
    """(kernel code, a, b) for one validated command."""
    code, _ = COMMANDS[cmd.do]
    board, tables = scn.board, scn.tables
    if cmd.do in ("move", "attack"):
        where = cmd.to if cmd.do == "move" else cmd.target
        return code, cmd.unit, board.index(*where)
    if cmd.do == "enter":
        return code, cmd.unit, cmd.city
    if cmd.do in ("found", "disband"):
        return code, cmd.unit, 0
    if cmd.do == "buy_tile":
        return code, cmd.city, board.index(*cmd.at)
    if cmd.do == "queue":
        return code, cmd.city, (tables.unit_names + tables.building_names).index(cmd.item)
    if cmd.do == "rush":
        return code, cmd.city, 0
    if cmd.do == "repair":
        return code, cmd.city, cmd.hp
    if cmd.do == "research":
        return code, tables.tech_names.index(cmd.tech), 0
    if cmd.do == "truce":
        return code, cmd.with_, 0
    if cmd.do == "set_seat":
        return code, cmd.seat, 0
    return code, 0, 0


def refusal_text(scn: Scenario, state: State, cmd: CommandSpec, reason: int) -> str:
    """The designer's words for a refused command, e.g. `truce with seat 1: cannot ...`."""
    tables, tb = scn.tables, scn.tables.arrays(None, len(scn.spec.seats))
    seat = int(state.active_seat[0])
    ctx: dict[str, Any] = {"seat": seat, "unit": cmd.unit, "city": cmd.city, "item": cmd.item,
                           "tech": cmd.tech, "quota": tb.quota, "gold": int(state.seat_gold[seat]),
                           "min_distance": tb.city_min_distance,
                           "settler_pop": tb.settler_min_population, "price": "?"}
    if cmd.unit is not None and 0 <= cmd.unit < state.n_units[0]:
        ut = int(state.unit_type[cmd.unit])
        ctx["unit_type"] = "bandit" if ut < 0 else tables.unit_names[ut]
        ctx["unit_owner"] = f"seat {owner_name(int(state.unit_owner[cmd.unit]))}"
    other = None
    if cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        owner = int(state.city_owner[cmd.city])
        ctx["city_owner"] = "the neutral side" if owner == NEUTRAL else f"seat {owner}"
        ctx["city_hp"] = int(state.city_hp[cmd.city])
        other = owner
    target = cmd.target or cmd.to
    if target is not None:
        t = scn.board.index(*target)
        if state.tile_site[t] >= 0:
            other = int(state.city_owner[state.tile_site[t]])
        elif state.tile_unit[t] >= 0:
            other = int(state.unit_owner[state.tile_unit[t]])
    ctx["other"] = other
    if cmd.do == "buy_tile" and cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        n = int((state.tile_bought_by == cmd.city).sum())
        ctx["price"] = tb.tile_price_first + tb.tile_price_step * n
    elif cmd.do == "truce":
        ctx["price"] = tb.truce_price
    elif cmd.do == "repair" and cmd.hp is not None:
        ctx["price"] = cmd.hp * tb.gold_repair_price
    elif cmd.do == "rush" and cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        from sim.kernels.rules.commands import rush_price
        if state.city_queue[cmd.city, 0] >= 0:
            ctx["price"] = int(rush_price(state, tb, cmd.city))
            ctx["item"] = item_name(tables, int(state.city_queue[cmd.city, 0]))
    text = REASON_TEXT.get(reason, f"refused (code {reason})")
    if reason in (R.R_TRUCE, R.R_PACT) and cmd.do in ("enter", "attack"):
        text = text.split(":")[0] + (": cannot enter its cities" if cmd.do == "enter"
                                     else ": cannot attack it")
    with contextlib.suppress(KeyError, IndexError):
        text = text.format(**ctx)
    if cmd.do == "truce" and reason != R.R_TRUCE:
        return f"truce with seat {cmd.with_}: {text}"
    return text


def run_scenario(scn: Scenario, check: bool = True) -> dict[str, Any]:
    """Apply every command in order and return the SCENARIOS.md report.

    A refused command leaves the state as it was and is reported with its
    reason; with `check`, the invariant checker runs after every command.
    """
    from sim.engine.check import check_invariants
    from sim.engine.match import play_turns

    state = scn.state
    tb = scn.tables.arrays(None, len(scn.spec.seats))
    results = []
    for i, cmd in enumerate(scn.spec.commands):
        before = copy_state(state)
        if cmd.do == "play_turns":
            reason = play_turns(state, tb, scn.board, int(cmd.n))
        else:
            code, a, b = command_args(scn, cmd)
            reason = run_command(state, tb, scn.board, code, a, b)
        error = None
        if reason != 0:
            error = refusal_text(scn, before, cmd, reason)
        results.append({"index": i, "do": cmd.do, "ok": reason == 0, "error": error})
        if check:
            problems = check_invariants(state, scn.tables, scn.board)
            if problems:
                raise AssertionError(f"{scn.path}: after command {i} ({cmd.do}): "
                                     + "; ".join(problems))
    report = state_report(state, scn.tables, scn.board)
    report["name"] = scn.spec.name
    report["commands"] = results
    return report
