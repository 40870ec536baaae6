"""No input file ends in a traceback (issue 47, item 1): mutants of every input file the
project ships (the default tables, every experiment, sensitivity and tune file, the
scenario examples), drawn by hypothesis, are each either accepted (exit 0) or refused
with lines that name the file (`file:line: key: reason`) and exit 2. The commands run
in this process (sim.cli's main, as the shell calls it; tools/fuzz_inputs.py); one test
runs `sim` as a process to show that no traceback reaches its stderr either.

The mutations and the outcome labels live in tools/fuzz_inputs.py, which counts the
outcomes over many more mutants (`--mutants 300`)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.rules.tomlpos import MAX_INPUT_BYTES, MAX_NESTING, InputLimit, parse_input, read_input
from tests.test_runs_support import one_line_error, sim, write
from tools.fuzz_inputs import check, mutate, seeds, write_mutant

SEEDS = seeds()
FUZZ = settings(max_examples=20, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_every_input_file_is_fuzzed():
    kinds = {s.kind for s in SEEDS}
    assert kinds == {"tables", "sweep", "sensitivity", "tune", "scenario"}
    assert sum(s.kind == "sweep" for s in SEEDS) >= 10


@pytest.mark.parametrize("kinds", ["tables", "sweep", "sensitivity|tune", "scenario"])
@FUZZ
@given(data=st.data())
def test_mutated_input_files_are_accepted_or_refused_by_name(work, kinds, data):
    """`kinds`: the seed files of these kinds (tools/fuzz_inputs.Seed), one drawn per
    example and mutated one to three times."""
    pool = [s for s in SEEDS if s.kind in kinds.split("|")]
    seed = pool[data.draw(st.integers(0, len(pool) - 1), label="seed file")]
    mutant = mutate(seed.path.read_bytes(), lambda n: data.draw(st.integers(0, n - 1)))
    got = check(seed.kind, write_mutant(work, mutant), work)
    assert got.label in ("ok", "refused"), (seed.path.name, got, mutant[:400])


@pytest.mark.parametrize("text,line", [
    ("a = " + "[" * 3000 + "]" * 3000, 1),
    ("x = 1\ny = { b = " + "{c=" * 3000 + "1" + "}" * 3001, 2),
    ("x = 1\n" + "a." * 5000 + "a = 1", 2),
    ("[" + ".".join(["t"] * 40) + "]\nk = 1", 1),
    # a header cut short before the nesting (tools/fuzz_inputs.py found its traceback)
    ("[bo\n[[se\nzz = " + "{a=" * 40 + "1" + "}" * 40, 3),
])
def test_deep_nesting_is_refused_with_its_line(text, line):
    with pytest.raises(InputLimit) as exc:
        parse_input(text)
    assert exc.value.line == line
    assert f"nested more than {MAX_NESTING} levels deep" in exc.value.where("f.toml")


def test_brackets_in_strings_and_comments_are_not_nesting():
    text = ('s = "' + "[" * 100 + '"\nt = \'\'\'\n' + "{" * 100 + "\n'''\n# " + "[" * 100 +
            "\nu = \"a\\\"" + "[" * 100 + '"\nv = [[1], [2]]\n')
    assert parse_input(text)["v"] == [[1], [2]]


def test_a_file_too_large_or_endless_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * MAX_INPUT_BYTES)
    for path in (big, "/dev/zero"):
        with pytest.raises(InputLimit, match="larger than 2,000,000 bytes"):
            read_input(path)


def test_no_traceback_reaches_stderr_of_the_sim_process(tmp_path):
    """The same refusals from `sim` run as the shell runs it: one line, exit 2."""
    deep = write(tmp_path / "deep.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    one_line_error(sim("tables", "check", deep), f"{deep}:1: a: nested more than 32 levels")
    exp = write(tmp_path / "exp.toml", 'name = "x"\nroot_seed = 1\nmatches = 1\n'
                'variants = [{ name = "v", set = ' + "{a=" * 4000 + "1" + "}" * 4001 + " ]\n")
    one_line_error(sim("sweep", exp, "--jobs", "1", "--dry-run"), f"{exp}:4: variants: nested")
    one_line_error(sim("scenario", deep), f"{deep}:1: a: nested more than 32 levels")
    one_line_error(sim("tables", "check", "--set", "a=" + "[" * 2000 + "]" * 2000),
                   "--set a: nested more than 32 levels deep")
