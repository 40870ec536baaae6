"""Sample-size planning (issues 13, 44): McNemar's matches from a pilot's discordance,
at the level the report's Holm correction leaves each test."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from sim.analysis.plan import (
    family_size,
    holm_power,
    mcnemar_matches,
    mcnemar_power,
    plan,
    unpaired_matches,
)


def test_planned_matches_give_the_stated_power_in_simulation():
    """Paired indicators whose pairs disagree with probability 0.2, one way more often
    by 0.05: at the planned n, the exact McNemar test rejects in about 80 % of 600
    simulated pilots (within the simulation's own error)."""
    d, detect = 0.2, 0.05
    n = mcnemar_matches(d, detect)
    assert 500 < n < 800
    rng = np.random.default_rng(7)
    p_gain, p_loss = (d + detect) / 2, (d - detect) / 2
    hits = 0
    reps = 600
    for _ in range(reps):
        kind = rng.choice(3, size=n, p=[p_gain, p_loss, 1 - d])
        gain, loss = int((kind == 0).sum()), int((kind == 1).sum())
        hits += mcnemar([[0, gain], [loss, 0]], exact=True).pvalue <= 0.05
    assert abs(hits / reps - 0.8) < 0.06


def test_no_plan_without_disagreement_and_pairing_saves_matches():
    assert mcnemar_matches(0.0, 0.02) is None
    assert mcnemar_matches(0.0003, 0.02) is None       # 0.02² > discordance: impossible
    # a paired difference is at most the discordance: 0.2 where a tenth disagree
    # cannot happen (Connor's formula alone would plan 17 matches for it)
    assert mcnemar_matches(0.099, 0.2) is None and mcnemar_matches(0.1, 0.1) is None
    # near the limit, at least the six one-way pairs the exact test needs, on average
    assert mcnemar_matches(0.1, 0.09) >= 60
    # the exact power at the planned size reaches the target, one match fewer does not
    # (up to the exact test's small wobble)
    n = mcnemar_matches(0.3, 0.03)
    assert mcnemar_power(n, 0.3, 0.03) >= 0.8 > mcnemar_power(n - 40, 0.3, 0.03)
    with pytest.raises(ValueError):
        mcnemar_matches(0.1, 0.0)
    assert mcnemar_matches(0.05, 0.02) < unpaired_matches(0.25, 0.02)
    # two independent samples: the normal approximation of the two-sided z test
    z = 1.959964 * np.sqrt(2 * 0.31 * 0.69) + 0.841621 * np.sqrt(0.3 * 0.7 + 0.32 * 0.68)
    assert unpaired_matches(0.3, 0.02) == pytest.approx((z / 0.02) ** 2, rel=1e-3)


def test_a_plan_for_the_holm_family_holds_its_power_and_an_uncorrected_one_does_not():
    """Eight tests corrected together (one variant: four victory types and four
    metrics): planned at alpha / 8, the test with the difference is flagged after Holm
    in about 80 % of simulated runs; planned at alpha alone, far less often."""
    d, detect, family = 0.2, 0.05, 8
    rng = np.random.default_rng(11)
    planned = mcnemar_matches(d, detect, 0.05 / family)
    assert abs(holm_power(rng, planned, d, detect, family, tries=500) - 0.8) < 0.05
    uncorrected = mcnemar_matches(d, detect, 0.05)
    assert uncorrected < planned
    assert holm_power(rng, uncorrected, d, detect, family, tries=500) < 0.65


def test_plan_reads_the_discordance_of_each_variant_and_victory_type():
    base = ["science"] * 30 + ["conquest"] * 70
    moved = ["conquest"] * 10 + ["science"] * 20 + ["conquest"] * 70   # 10 science -> conquest
    same = list(base)
    rows = [{"variant": v, "match_index": i, "victory": x, "winner": 0, "end_turn": 80}
            for v, seq in (("baseline", base), ("moved", moved), ("inert", same))
            for i, x in enumerate(seq)]
    table = plan(pl.DataFrame(rows), "baseline", 0.05)
    got = {(r["variant"], r["victory"]): r for r in table.iter_rows(named=True)}
    assert got[("moved", "science")]["discordance"] == pytest.approx(0.10)
    assert got[("moved", "science")]["baseline_share"] == pytest.approx(0.30)
    # two variants besides the baseline: Holm over 2 × (4 victory types + 4 metrics)
    assert family_size(2, 4) == 16
    assert got[("moved", "science")]["level"] == pytest.approx(0.05 / 16)
    assert got[("moved", "science")]["paired_matches"] == mcnemar_matches(0.10, 0.05,
                                                                          0.05 / 16)
    alone = plan(pl.DataFrame(rows), "baseline", 0.05, family=1)
    assert alone.item(0, "level") == 0.05
    assert got[("inert", "science")]["paired_matches"] is None
    assert {r["variant"] for r in table.iter_rows(named=True)} == {"moved", "inert"}
