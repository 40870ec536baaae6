"""Layers import only the layers before them (tables → kernels → engine → runner →
outputs → analysis → report); analysis never imports the engine; kernels read
balance values only from arguments, never from module globals."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sim

PACKAGE = Path(sim.__file__).parent

LAYERS = [
    # outcomes: the schemas of the outcome tables, a contract shared by runner and analysis
    ("foundation", r"sim(\.(jit|tomlpos|tables|board|rng|state|outcomes))?$"),
    ("kernels", r"sim\.kernels(\..+)?$"),
    ("engine", r"sim\.(engine|scenario|setup|check|draw|engine_loop|match)$"),
    ("runner", r"sim\.(runner|experiments)$"),
    ("outputs", r"sim\.(store|provenance|sweep)$"),
    ("analysis", r"sim\.analysis(\..+)?$"),
    ("report", r"sim\.report$"),
    ("front", r"sim\.(cli|bench|__main__)$"),
]
# analysis reads the Parquet outputs: it may use the foundation, outputs and itself only
ANALYSIS_MAY_IMPORT = {"foundation", "outputs", "analysis"}


def layer_of(module: str) -> int:
    for i, (_name, pattern) in enumerate(LAYERS):
        if re.match(pattern, module):
            return i
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in this test")


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        yield name.removesuffix(".__init__"), path


def sim_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("sim")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sim"):
            out.add(node.module)
    return out


def test_every_import_goes_down_the_layers():
    bad = []
    for name, path in modules():
        mine = layer_of(name)
        for imported in sim_imports(path):
            theirs = layer_of(imported)
            if theirs > mine:
                bad.append(f"{name} ({LAYERS[mine][0]}) imports {imported} ({LAYERS[theirs][0]})")
            if LAYERS[mine][0] == "analysis" and LAYERS[theirs][0] not in ANALYSIS_MAY_IMPORT:
                bad.append(f"{name} (analysis) imports {imported}")
    assert not bad, "\n".join(bad)


def test_only_sim_jit_calls_numba_njit():
    for name, path in modules():
        if name == "sim.jit":
            continue
        text = path.read_text()
        assert "numba.njit" not in text and "from numba import" not in text, name


def test_kernels_take_balance_values_as_arguments():
    """No kernel module defines upper-case numeric globals other than codes
    (enumerations such as event kinds or reason codes), so no balance number can be
    frozen into numba's cache."""
    allowed = re.compile(r"^(EV_|EVENT_NAMES$|TURN_FIELDS$|R_|C_|BUY_|TARGET_|CARD_|REVOLT_|"
                         r"W_|FAR$|OK$|NEUTRAL$|BANDIT$|PLAINS$|CONQUEST$|SCIENCE_WIN$|DOMINANCE$|TURN_LIMIT$|HUMAN_OUT$|_)")
    for name, path in modules():
        if not name.startswith("sim.kernels"):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        assert allowed.match(target.id), f"{name}: global {target.id}"
