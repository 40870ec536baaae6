"""`python -m sim.cli`: the `sim` command."""

from sim.cli import main

main()
