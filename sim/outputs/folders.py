"""Names of what a designer's instrument writes into its folder beside its sweeps, kept
here once for the runner that writes them and the analysis that reads them (which may
not import the runner), and the rule for the names a file gives them."""

import re

SENSITIVITY_DESIGN_FILE = "sensitivity.json"  # `sim sensitivity`'s design (its points)
MORRIS_DESIGN_FILE = "morris.json"             # the Morris screen's design (its trajectories)
MORRIS_DIR = "morris"                          # the Morris sweep's run folder
SWEEP_DIR = "sweep"     # the sweep's own run folder inside a sensitivity or tune folder

# A name from a file that names a folder or a file of a run: an experiment's,
# sensitivity's or tune's (runs/NAME) and a variant's (TABLE/variant=NAME/,
# _done/NAME__00000.json). ASCII letters, digits, _ . - and a letter or digit first,
# so that no name is `..`, holds a / or a NUL, ends a line, or reads as an option;
# MAX_NAME keeps folder and file names well under the 255 bytes file systems allow.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
MAX_NAME = 120


def name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot name a folder or a file of a run, or None; `what` says whose
    name it is (experiment, variant, sensitivity, tune). The name is shown quoted and
    cut short, so the message stays one line whatever the name holds."""
    shown = repr(name[:40]) + ("…" if len(name) > 40 else "")
    if len(name) > MAX_NAME:
        return (f"{what} name {shown} is {len(name):,} characters; at most {MAX_NAME} (it "
                "names folders and files)")
    if NAME.fullmatch(name) is None:
        return (f"{what} name {shown}: letters, digits, _ . - only (ASCII, a letter or "
                "digit first: it names folders and files)")
    return None
