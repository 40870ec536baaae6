"""The package's folders are its layers, and imports only run down them.

rules -> world -> kernels -> engine -> outputs -> runner -> analysis -> report -> front.
Analysis never imports the engine (it reads outputs only); nothing in `sim` imports
`tests`; every module belongs to exactly one layer; kernels read balance values only
from arguments, never from module globals.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

import sim

PACKAGE = Path(sim.__file__).parent

# folder -> layer, in import order. The jit switch sits below everything (every kernel
# layer uses it); the package itself (the front door) and the CLI (sim/cli/) sit on top.
LAYERS = [
    ("jit", r"sim\.jit(cache)?$"),
    ("rules", r"sim\.rules(\..+)?$"),
    ("world", r"sim\.world(\..+)?$"),
    ("kernels", r"sim\.kernels(\..+)?$"),
    ("engine", r"sim\.engine(\..+)?$"),
    # outputs below runner: each worker writes its own chunk's Parquet (no rows cross
    # process boundaries), so the runner calls the store, never the other way round
    ("outputs", r"sim\.outputs(\..+)?$"),
    ("runner", r"sim\.runner(\..+)?$"),
    ("analysis", r"sim\.analysis(\..+)?$"),
    ("report", r"sim\.report(\..+)?$"),
    ("front", r"sim(\.cli(\..+)?|\.__main__)?$"),
]
# analysis reads the Parquet outputs: never the engine, the kernels or the runner
ANALYSIS_MAY_IMPORT = {"jit", "rules", "outputs", "analysis"}
TOP_LEVEL = {"__init__.py", "jit.py", "jitcache.py"}


def layer_of(module: str) -> int:
    for i, (_name, pattern) in enumerate(LAYERS):
        if re.match(pattern, module):
            return i
    raise AssertionError(f"{module} belongs to no layer: add its folder to LAYERS")


def modules(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        name = ".".join(rel.parts)
        yield name.removesuffix(".__init__"), path


def imports_of(path: Path, prefix: str) -> set[str]:
    """Every module named by an import statement of `path` that starts with `prefix`
    (function-level imports included)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == prefix}
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] == prefix and node.level == 0:
            out.add(node.module)
            # `from sim.analysis import metrics` names the module sim.analysis.metrics
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if (PACKAGE.parent / (full.replace(".", "/") + ".py")).exists():
                    out.add(full)
    return out


def layering_problems(package: Path = PACKAGE) -> list[str]:
    bad = []
    for name, path in modules(package):
        mine = layer_of(name)
        if imports_of(path, "tests"):
            bad.append(f"{name} imports from tests/")
        for imported in imports_of(path, "sim"):
            theirs = layer_of(imported)
            if theirs > mine and LAYERS[mine][0] != "front":
                bad.append(f"{name} ({LAYERS[mine][0]}) imports {imported} "
                           f"({LAYERS[theirs][0]}), a layer above it")
            if LAYERS[mine][0] == "analysis" and LAYERS[theirs][0] not in ANALYSIS_MAY_IMPORT:
                bad.append(f"{name} (analysis) imports {imported}")
    return bad


def test_every_import_goes_down_the_layers():
    problems = layering_problems()
    assert not problems, "\n".join(problems)


def test_the_top_level_holds_only_the_front_door_the_cli_and_the_jit_switch():
    loose = {p.name for p in PACKAGE.glob("*.py")} - TOP_LEVEL
    assert not loose, f"modules outside a layer folder: {sorted(loose)}"
    for folder in (p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "__init__.py").exists(), folder
        layer_of(f"sim.{folder.name}")  # raises when the folder is in no layer


@pytest.mark.parametrize("planted, expected", [
    ("from sim.engine.match import play_match\n", "imports sim.engine.match (engine)"),
    ("from tests.reference import territory\n", "imports from tests/"),
])
def test_an_upward_import_is_caught(tmp_path, planted, expected):
    """The checker itself: a copy of the package with one planted import into the
    rules layer fails the check, naming the offending module."""
    copy = tmp_path / "sim"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "rules" / "tomlpos.py"
    target.write_text(planted + target.read_text())
    problems = layering_problems(copy)
    assert any(p.startswith("sim.rules.tomlpos") and expected in p for p in problems), problems


def test_a_module_outside_the_map_is_caught():
    with pytest.raises(AssertionError, match="belongs to no layer"):
        layer_of("sim.helpers")


def test_only_sim_jit_calls_numba_njit():
    for name, path in modules():
        if name == "sim.jit":
            continue
        text = path.read_text()
        assert "numba.njit" not in text and "from numba import" not in text, name


def test_kernels_define_no_numeric_globals():
    """No kernel module binds an upper-case global to a number: codes live in
    sim.rules.codes and balance values arrive as arguments, so nothing can be frozen
    into numba's cache."""
    for name, path in modules():
        if not name.startswith("sim.kernels"):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant | ast.BinOp):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.lstrip("_").isupper():
                        raise AssertionError(f"{name}: global {target.id} = ...")


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports (function-level
    imports included; a package's import counts as its __init__)."""
    names = {name for name, _path in modules(package)}
    return {name: {m for m in imports_of(path, "sim") if m in names and m != name}
            for name, path in modules(package)}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan): each is an
    import circle, whatever its length."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_anywhere():
    circles = import_circles(import_graph())
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_circle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def numba_internals_used(path: Path) -> list[str]:
    """Every use in `path` of a private (`_`-prefixed) attribute of numba or llvmlite,
    and every assignment to or setattr on one of their attributes (a run-time patch)."""
    tree = ast.parse(path.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {(a.asname or a.name).split(".")[0] for a in node.names
                      if a.name.split(".")[0] in ("numba", "llvmlite")}
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] in ("numba", "llvmlite"):
            roots |= {a.asname or a.name for a in node.names}
            if any(a.name.startswith("_") for a in node.names):
                return [f"line {node.lineno}: imports a private name of {node.module}"]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(base, ast.Name) and base.id in roots):
                continue
            if node.attr.startswith("_"):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            if isinstance(node.ctx, ast.Store | ast.Del):
                found.append(f"line {node.lineno}: assigns {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "setattr" and node.args and \
                isinstance(node.args[0], ast.Name | ast.Attribute):
            base = node.args[0]
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in roots:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_numba_is_used_as_it_ships():
    """No module reaches a private attribute of numba or llvmlite or patches either at
    run time: every kernel is compiled by stock numba (sim.jit)."""
    for name, path in modules():
        found = numba_internals_used(path)
        assert not found, f"{name}: " + "; ".join(found)


def test_the_internals_check_finds_a_patch(tmp_path):
    patched = tmp_path / "patched.py"
    patched.write_text("from numba.core import dispatcher\n"
                       "dispatcher.Dispatcher.add_overload = print\n"
                       "x = dispatcher.Dispatcher._cache\n")
    assert len(numba_internals_used(patched)) == 2


# issue 41: a function a maintainer reads in one screen. Kernels (@njit) are exempt:
# the longest are phases of the match loop whose locals numba keeps in registers, and
# docs/architecture.md lists them; a CLI command only parses, calls and prints.
LONGEST_FUNCTION = 80
LONGEST_COMMAND_BODY = 40


def _is_kernel(func: ast.FunctionDef) -> bool:
    return any("njit" in ast.unparse(d) for d in func.decorator_list)


def _is_command(func: ast.FunctionDef) -> bool:
    return any(".command" in ast.unparse(d) for d in func.decorator_list)


def _body_lines(func: ast.FunctionDef) -> int:
    """Lines of a function's statements, its docstring left out."""
    body = func.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def long_functions(path: Path) -> list[str]:
    """Functions of `path` over the limits: any but a kernel longer than
    LONGEST_FUNCTION lines (signature to end), a CLI command whose body is longer than
    LONGEST_COMMAND_BODY."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or _is_kernel(node):
            continue
        span = node.end_lineno - node.lineno + 1
        if span > LONGEST_FUNCTION:
            found.append(f"{node.name} (line {node.lineno}): {span} lines")
        if _is_command(node) and _body_lines(node) > LONGEST_COMMAND_BODY:
            found.append(f"command {node.name} (line {node.lineno}): a body of "
                         f"{_body_lines(node)} lines")
    return found


def test_no_function_is_longer_than_a_screen():
    long = {name: found for name, path in modules() if (found := long_functions(path))}
    assert not long, "; ".join(f"{n}: {', '.join(f)}" for n, f in long.items())


def test_the_length_check_finds_a_long_function(tmp_path):
    source = tmp_path / "long.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST_FUNCTION))
    cmd_body = "\n".join(f"    y{i} = {i}" for i in range(LONGEST_COMMAND_BODY + 1))
    source.write_text(f"def long():\n{body}\n\n\n@njit\ndef kernel():\n{body}\n\n\n"
                      f"@app.command('x')\ndef cmd():\n    '''doc'''\n{cmd_body}\n")
    found = long_functions(source)
    assert len(found) == 2 and found[0].startswith("long ") and "command cmd" in found[1]

# A game's internals: the kernels (the hex game's and Crown's), Crown's engine modules
# and Crown's rules module. The layers above the engine (runner, outputs, analysis,
# report) and the command line reach them only through the game interface (issue 48
# item 1): sim.outputs.games, the registry, is the one module of them that imports a
# game's internals; it names each game's chunk player, report module, study hooks
# (sensitivity, tune: Game.study_runner, study_analysis) and match replay by path,
# imported on use, and those named modules import no game's internals either (a
# report's process never loads numba) unless they sit in the engine.
GAME_INTERNALS = (r"sim\.kernels(\..+)?$", r"sim\.engine\.crown(_.+)?$", r"sim\.rules\.crown$")
ABOVE_THE_GAMES = {"outputs", "runner", "analysis", "report", "front"}
REGISTRY = "sim.outputs.games"
# what predates the interface, named here one by one so no new one slips in: the
# benchmarks time the kernels themselves (`sim bench match`, `--game crown`), the map
# drawing shares the hex game's region kernel, Crown's analysis (the figures of its
# report sections) reads Crown's codes, and `sim scenario --game crown` plays Crown's
# scenario commands (sim.cli.play.crown_scenario: Crown's Game.scenario_runner)
INTERFACE_EXCEPTIONS = {
    ("sim.runner.bench", "sim.kernels.rules.territory"),
    ("sim.runner.bench", "sim.engine.crown"),
    ("sim.runner.bench", "sim.rules.crown"),
    ("sim.report.map", "sim.kernels.rules.standings"),
    ("sim.analysis.crown", "sim.rules.crown"),
    ("sim.cli.play", "sim.engine.crown_scenario"),
}


def game_internal_problems(package: Path = PACKAGE) -> list[str]:
    bad = []
    for name, path in modules(package):
        if LAYERS[layer_of(name)][0] not in ABOVE_THE_GAMES or name == REGISTRY:
            continue
        for imported in imports_of(path, "sim"):
            if any(re.match(p, imported) for p in GAME_INTERNALS) and \
                    (name, imported) not in INTERFACE_EXCEPTIONS:
                bad.append(f"{name} imports {imported}, a game's internals: go through "
                           f"{REGISTRY}")
    return bad


def test_runner_outputs_analysis_and_report_reach_a_game_only_through_its_interface():
    problems = game_internal_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("target, planted", [
    ("runner/chunk.py", "from sim.engine.crown import play_crown_match\n"),
    ("report/crown.py", "from sim.kernels.crown import crown_of\n"),
    ("outputs/store.py", "import sim.kernels.loop\n"),
    ("cli/sensitivity.py", "from sim.rules.crown import SIDES\n"),
    ("runner/tune.py", "from sim.rules import crown\n"),
    ("analysis/sensitivity.py", "from sim.engine.crown_replay import replay_crown_match\n"),
])
def test_a_game_internal_import_is_caught(tmp_path, target, planted):
    copy = tmp_path / "sim"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / target
    path.write_text(planted + path.read_text())
    module = "sim." + target.removesuffix(".py").replace("/", ".")
    problems = game_internal_problems(copy)
    assert any(p.startswith(f"{module} imports") for p in problems), problems


# issue 48: what differs between games is a field of their Game record (replay_command,
# match_bench, scenario_runner, sides, compile_first, outcomes_from_run, ...), so the
# shared code above the games never asks which game it has: by its name, or by which
# record it is. The registry itself is exempt: it is where the names are given.
def game_name_tests(path: Path, names: tuple[str, ...], records: tuple[str, ...] = (),
                    ) -> list[str]:
    """Every place in `path` that compares something with one of the games' `names` as
    a literal (==, !=, is, in a literal tuple/list/set, a `case "crown":`) or with one
    of the registry's game `records` by its name there (`game is HEX`,
    `x == games.CROWN`)."""
    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return (isinstance(node, ast.Name) and node.id in records) or \
            (isinstance(node, ast.Attribute) and node.attr in records)

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            hit = any(named(n) for n in (node.left, *node.comparators))
        elif isinstance(node, ast.MatchValue):
            hit = named(node.value)
        else:
            continue
        if hit:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def game_name_problems(package: Path = PACKAGE) -> list[str]:
    from sim.outputs import games

    records = tuple(k for k, v in vars(games).items() if isinstance(v, games.Game))
    bad = []
    for name, path in modules(package):
        if LAYERS[layer_of(name)][0] not in ABOVE_THE_GAMES or name == REGISTRY:
            continue
        bad += [f"{name}: {where} asks which game it has: make the difference a field of "
                f"the game's record ({REGISTRY}.Game)"
                for where in game_name_tests(path, games.GAME_NAMES, records)]
    return bad


def test_shared_code_asks_the_game_record_never_the_game_name():
    problems = game_name_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("target, planted", [
    ("runner/chunk.py", "def f(game):\n    return game.name == 'hex'\n"),
    ("outputs/store.py", "def f(settings):\n    return 'crown' != settings.game\n"),
    ("analysis/gate.py", "def f(g):\n    return g.name in ('crown', 'go')\n"),
    ("report/html.py", "def f(g):\n    match g:\n        case 'crown':\n            return 1\n"),
    ("cli/bench.py", "def f(game):\n    return game is not 'hex'\n"),
    ("runner/progress.py", "def f(game):\n    return game is not HEX\n"),
    ("analysis/outcomes.py", "def f(game):\n    return game == games.CROWN\n"),
])
def test_a_game_name_test_is_caught(tmp_path, target, planted):
    copy = tmp_path / "sim"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / target
    path.write_text(path.read_text() + "\n\n" + planted)
    module = "sim." + target.removesuffix(".py").replace("/", ".")
    problems = game_name_problems(copy)
    assert len(problems) == 1 and problems[0].startswith(f"{module}: line "), problems


def test_the_registry_and_the_layers_below_may_name_a_game(tmp_path):
    """The check's bounds: the registry gives the names, and the engine and kernels
    are a game's own code; a literal that is not a game's name is no game test."""
    copy = tmp_path / "sim"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for target, planted in (("outputs/games.py", "assert GAMES['hex'].name == 'hex'\n"),
                            ("engine/crown.py", "def f(game):\n    return game == 'crown'\n"),
                            ("runner/chunk.py", "def f(shape):\n    return shape == 'hexagon'\n"),
                            ("runner/tune.py", "BANDED_TOO = HEX.metrics\n")):
        path = copy / target
        path.write_text(path.read_text() + "\n\n" + planted)
    assert game_name_problems(copy) == []


def test_every_game_names_modules_that_exist():
    """The interface's paths are strings: each must name a module (and function)."""
    import importlib.util

    from sim.outputs.games import GAMES

    for game in GAMES.values():
        module, _, function = game.chunk_player.partition(":")
        assert importlib.util.find_spec(module) is not None, game.chunk_player
        assert function and f"def {function}(" in Path(
            importlib.util.find_spec(module).origin).read_text(), game.chunk_player
        if game.report_module is not None:
            assert importlib.util.find_spec(game.report_module) is not None
        for module in (game.study_runner, game.study_analysis):
            assert importlib.util.find_spec(module) is not None, module
        for named in (game.match_replay, game.replay_command, game.match_bench,
                      game.scenario_runner):
            if named is not None:
                module, _, function = named.partition(":")
                assert f"def {function}(" in Path(
                    importlib.util.find_spec(module).origin).read_text(), named
