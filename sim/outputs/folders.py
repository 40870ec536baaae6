"""Names of what a designer's instrument writes into its folder beside its sweeps, kept
here once for the runner that writes them and the analysis that reads them (which may
not import the runner)."""

SENSITIVITY_DESIGN_FILE = "sensitivity.json"  # `sim sensitivity`'s design (its points)
MORRIS_DESIGN_FILE = "morris.json"             # the Morris screen's design (its trajectories)
MORRIS_DIR = "morris"                          # the Morris sweep's run folder
SWEEP_DIR = "sweep"     # the sweep's own run folder inside a sensitivity or tune folder
