# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Victory types across variants
#
# How often conquest, science, dominance and the turn limit decide a match in each
# balance variant, with 95% Wilson intervals, and which differences from the
# baseline survive correction for multiple comparisons. Every number comes from
# `sim.analysis`; this notebook defines no metric of its own.
#
# Set `SIM_RUN_DIR` to a sweep's run folder, relative to the project root (default
# `runs/demo`, made by `make demo`).

# %%
import os

import altair as alt

from sim.analysis import charts, metrics
from sim.analysis.load import load_run, missing_table_notes
from sim.outputs.store import locate_run

# charts as inline SVG drawn by vl-convert: nothing is fetched from a CDN, so they
# render offline (and in the saved notebook)
alt.renderers.enable("svg")
# SIM_RUN_DIR relative to the project root, not to notebooks/ where the kernel runs;
# a missing, unfinished or damaged run stops here with one line saying why
run = load_run(locate_run(os.environ.get("SIM_RUN_DIR", "runs/demo")))
# a run that chose not to write some tables (tables_out) reads them as empty: what
# that costs this notebook
for note in missing_table_notes(run.provenance):
    print(note)
print(f"{run.matches.height} matches, variants: {sorted(run.matches['variant'].unique())}, "
      f"baseline: {run.baseline}")

# %%
freq = metrics.victory_frequencies(run.matches)
freq

# %%
charts.victory_mix(freq)

# %% [markdown]
# ## Paired against the baseline
# Match *i* of every variant is played on the same map with the same draws, so
# outcomes pair by match index (exact McNemar tests, Holm-corrected).

# %%
tests = metrics.significance(metrics.paired_victory_tests(run.matches, run.baseline))
tests

# %%
charts.end_turns(metrics.end_turn_distribution(run.matches))
