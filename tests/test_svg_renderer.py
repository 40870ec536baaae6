"""The report's charts are drawn in a child process (sim.report.svg_renderer); the
report bench counts that child's memory with the report's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sim.analysis._altair import alt
from sim.report.svg_renderer import SvgRenderer
from sim.runner.bench import _TreeMemory


def _bars(n: int) -> alt.Chart:
    data = alt.Data(values=[{"item": f"i{k}", "count": k + 1} for k in range(n)])
    return alt.Chart(data).mark_bar().encode(x=alt.X("item:N"), y=alt.Y("count:Q"))


def test_charts_come_back_in_the_order_submitted_and_equal_to_drawing_them_here():
    import vl_convert as vlc

    charts = [_bars(n) for n in (2, 5, 3)]
    with SvgRenderer() as renderer:
        assert [renderer.submit(c, f"bars {i}") for i, c in enumerate(charts)] == [0, 1, 2]
        drawn = renderer.results()
    here = [vlc.vegalite_to_svg(c.to_dict(validate=False)) for c in charts]
    assert drawn == here
    assert all(svg.lstrip().startswith("<svg") for svg in drawn)
    assert drawn[0].count("<path") < drawn[1].count("<path")  # 2 bars, then 5


def test_a_renderer_that_draws_nothing_starts_no_child():
    with SvgRenderer() as renderer:
        assert renderer.results() == []
        assert renderer._proc is None


def test_a_chart_that_cannot_be_drawn_is_named():
    # altair checks the spec's schema, not its expressions: Vega refuses this one
    bad = alt.Chart(alt.Data(values=[{"a": 1}])).mark_bar().transform_calculate(
        b="datum.a +* 2").encode(x=alt.X("b:Q"))
    with SvgRenderer() as renderer:
        renderer.submit(_bars(2), "fine")
        renderer.submit(bad, "capital falls per match")
        with pytest.raises(ValueError, match=r"chart 'capital falls per match' could not be"):
            renderer.results()


def test_a_child_that_dies_is_reported_and_leaving_the_block_stops_it():
    with SvgRenderer() as renderer:
        renderer.submit(_bars(2), "first")
        proc = renderer._proc
        proc.kill()
        proc.wait()
        with pytest.raises(RuntimeError, match=r"chart renderer .*(stopped|exited)"):
            renderer.submit(_bars(3), "second")
            renderer.results()
    with SvgRenderer() as renderer:
        renderer.submit(_bars(2), "left running")
        proc = renderer._proc
    assert proc.poll() is not None


def test_the_tree_memory_sums_a_parent_and_its_child():
    """A parent and its child that each hold 120 MB at once: no process alone holds
    240 MB, the tree sampler sees their sum. (wait4's ru_maxrss cannot tell: it is the
    largest of the processes, and a child forked from this test process starts with
    this process's size.)"""
    import os

    hold = "b = b'x' * (120 * 2**20)"
    code = (f"import subprocess, sys; {hold}; subprocess.run([sys.executable, '-c', "
            f"\"{hold}; import time; time.sleep(0.8)\"])")
    proc = subprocess.Popen([sys.executable, "-c", code])
    tree = _TreeMemory(proc.pid)
    _pid, status, _usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = tree.stop()
    assert proc.returncode == 0
    assert 240 * 2**20 < peak < 400 * 2**20
