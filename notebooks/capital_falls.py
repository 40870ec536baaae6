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
# third seat takes. Set `SIM_RUN_DIR` to a sweep's run folder (default `runs/demo`).

# %%
import os

from sim.analysis import charts, metrics
from sim.analysis.load import load_run

run = load_run(os.environ.get("SIM_RUN_DIR", "runs/demo"))

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
