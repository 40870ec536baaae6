"""The match loop timed (sim.kernels.timing, `sim bench match --phases`) plays exactly
the match it plays untimed: same state byte for byte, same turn log, at
skill 0 and with a skill-1 seat; and its phase counts cover the match."""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine.match import play_match, play_match_phases
from sim.rules.codes import N_PHASES, PHASES


@pytest.mark.parametrize(("seed", "match_index", "skill"), [(5, 0, 0), (5, 7, 0), (19, 2, 1)])
def test_the_timed_loop_plays_the_fast_paths_match(tables, seed, match_index, skill):
    seat_ai = [{"skill": skill}] if skill else None
    st, _board, log = play_match(tables, seed, match_index, seat_ai=seat_ai)
    fast = (st.tobytes(), log.copy())
    ticks = np.zeros(N_PHASES, dtype=np.int64)
    timed, _board, timed_log = play_match_phases(tables, seed, match_index, ticks,
                                                 seat_ai=seat_ai)
    assert timed.tobytes() == fast[0]
    assert np.array_equal(timed_log, fast[1])
    assert (ticks >= 0).all()
    used = {PHASES[k] for k in np.flatnonzero(ticks)}
    assert {"setup", "flow_income", "ai_unit_orders", "turn_record"} <= used
    if skill:  # a skill-1 seat's playouts cost more than all the seats' own orders
        assert ticks[PHASES.index("lookahead")] > ticks[PHASES.index("ai_unit_orders")]


def test_bench_phases_splits_the_time_of_every_phase():
    from sim.runner.bench import bench_phases

    out = bench_phases(4, seed=3)
    assert list(out["phases"]) and set(out["phases"]) == set(PHASES)
    total = sum(cell["ms"] for cell in out["phases"].values()) + out["python_ms"]
    assert total == pytest.approx(out["timed_ms_per_match"], rel=0.02, abs=0.01)
    assert out["phases"]["ai_unit_orders"]["ms"] > 0


def test_bench_scaling_plays_every_setting_on_its_own_board():
    """Every case of `sim bench scaling` plays (its radius-6 case was once refused: the
    tables check found no room on the short board that radius 6 scales to), each on
    the board its setting names."""
    from sim.rules.tables import load_tables
    from sim.runner.bench import bench_scaling

    out = bench_scaling(1, seed=3)
    cases = out["cases"]
    assert [cases[f"radius {r}"]["tiles"] for r in (6, 9, 12, 15)] == [
        3 * r * (r + 1) + 1 for r in (6, 9, 12, 15)]
    short = load_tables().board_radius("short")
    assert cases["length short"]["tiles"] == 3 * short * (short + 1) + 1
    assert all(c["matches_per_s"] > 0 and c["mean_turns"] > 0 for c in cases.values())
    assert out["radius_cost_vs_tiles"] > 0
