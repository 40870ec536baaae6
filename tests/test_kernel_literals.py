"""No number in the kernels: balance values come from the tables, codes and sizes from
sim.rules.codes.

A numeric literal in sim/kernels is either a balance value (it belongs in
tables/*.toml, reaching the kernel through the record) or a code, unit or size (a
named constant in sim.rules.codes). The only literals left are 0, 1, -1 and 2:
empty, one more or less, a pair, a half.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import sim

KERNELS = Path(sim.__file__).parent / "kernels"
ALLOWED = {0, 1, -1, 2}


def numeric_literals(path: Path) -> list[tuple[int, object]]:
    """(line, value) of every int or float literal of a module, a minus sign folded in
    (`-3` is one literal); True and False are not numbers here."""
    found: list[tuple[int, object]] = []

    class Visitor(ast.NodeVisitor):
        def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
            if isinstance(node.op, ast.USub) and _is_number(node.operand):
                found.append((node.lineno, -node.operand.value))
            else:
                self.generic_visit(node)

        def visit_Constant(self, node: ast.Constant) -> None:
            if _is_number(node):
                found.append((node.lineno, node.value))

    Visitor().visit(ast.parse(path.read_text(), filename=str(path)))
    return found


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex) \
        and not isinstance(node.value, bool)


def literal_problems(root: Path = KERNELS) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for line, value in numeric_literals(path):
            if value not in ALLOWED:
                out.append(f"{path}:{line}: numeric literal {value!r} (a balance value goes "
                           "into tables/*.toml, a code or size into sim.rules.codes)")
    return out


def test_kernels_hold_no_numeric_literal_but_0_1_minus_1_2():
    problems = literal_problems()
    assert not problems, "\n".join(problems)


def test_a_planted_literal_is_caught_with_its_file_and_line(tmp_path):
    """The checker itself: a copy of the kernels with `3` and `-7` planted fails,
    naming file:line; 0, 1, -1, 2 and flags pass."""
    copy = tmp_path / "kernels"
    shutil.copytree(KERNELS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "rules" / "events.py"
    lines = target.read_text().splitlines()
    n = len(lines)
    lines += ["", "def _planted(x):", "    return x * 3 + (-7) + 2 - 1 + 0 + (-1) + True", ""]
    target.write_text("\n".join(lines))
    problems = [p for p in literal_problems(copy) if p.startswith(f"{target}:")]
    assert problems == [
        f"{target}:{n + 3}: numeric literal 3 (a balance value goes into tables/*.toml, "
        "a code or size into sim.rules.codes)",
        f"{target}:{n + 3}: numeric literal -7 (a balance value goes into tables/*.toml, "
        "a code or size into sim.rules.codes)",
    ]
