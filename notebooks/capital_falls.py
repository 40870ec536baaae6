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
# # Capital-fall cascades (V08–V11)
#
# When a capital falls, the cities within 4 steps pass to the capturer in revolt
# and the owner's most populous remaining city becomes its capital, which can fall
# in turn. From the event log: falls per match, how deep the cascades run, how many
# cities each fall moves, the eliminations falls cause, and revolting cities that a
# third seat takes.
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

# %%
falls = metrics.capital_falls_per_match(run.events, run.matches)
falls

# %%
charts.capital_falls(falls)

# %%
charts.cascade_depth(metrics.cascade_depth(run.events))

# %%
metrics.transfers_per_fall(run.events)

# %%
metrics.eliminations_by_fall(run.events)

# %%
metrics.fall_to_elimination(run.events)

# %%
metrics.revolting_taken_by_third(run.events)
