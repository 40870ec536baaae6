"""Getting started: `sim demo` (a seeded map and an example scenario) and `sim warm`
(the engine compiled once into numba's cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import app
from sim.cli.play import map_cmd, scenario_cmd


@app.command("demo")
def demo(out: Annotated[Path, typer.Option(help="Folder for the demo's files.")]
         = Path("reports/demo")) -> None:
    """A seeded map and an example scenario (a quick look without a sweep)."""
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s

    out.mkdir(parents=True, exist_ok=True)
    map_cmd(seed=1, match=0, seats=None, out=out / "map-seed1.svg", tables=None, set_=None)
    example = REPO_ROOT / "experiments" / "scenarios" / "capital_fall.toml"
    typer.echo(f"\nscenario {example}:")
    scenario_cmd(example, as_json=False, tables=None)


@app.command("warm")
def warm_cmd() -> None:
    """Compile the engine once (a match and the scenario commands) into numba's cache,
    so the first real command starts in about a second. Says how long it should take
    first and how long it has taken every 10 s; does nothing costly when the cache is
    already filled."""
    from sim.jitcache import cache_dir
    from sim.runner.progress import warm_cache  # lazy: imports the engine (numba)

    cold, seconds = warm_cache(typer.echo)
    typer.echo(f"engine {'compiled' if cold else 'loaded from the cache'} in {seconds:.1f} s "
               f"({cache_dir()})")
