"""Charts to inline SVG on the other core.

vl-convert draws a Vega-Lite spec in its JavaScript engine, which takes some 0.7 s
to start, about 50 ms a chart after that, and holds the interpreter lock all the
while: drawn in the report's own process, the report's twenty charts were some
1.5 s of its critical path. `SvgRenderer` draws them in one small child process
(sim/report/_svg_child.py: vl-convert alone, no polars, altair or statistics
libraries) while the report goes on aggregating: the report builds each chart and
writes its spec (altair, in this process), sends it, and collects the SVGs at the
end. The engine's memory moves with it, so the report process no longer holds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_CHILD = Path(__file__).with_name("_svg_child.py")


class SvgRenderer:
    """Draws Vega-Lite specs to SVG in one child process, in the order submitted.

    The child starts at the first `submit` (a report that draws nothing starts
    none). `submit(chart)` writes the altair chart's spec, sends it and returns its
    index at once; `results()` waits for every SVG and returns them by index. A
    reader thread drains the child's answers as they come, so neither side ever
    blocks on a full pipe. Use it as a context manager: leaving the block (an error,
    Ctrl-C) stops the child. A spec that cannot be drawn raises ValueError naming
    its chart; a child that dies raises RuntimeError with the last line it printed."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._reader: threading.Thread | None = None
        self._names: list[str] = []
        self._answers: list[tuple[int, str]] = []

    def start(self) -> subprocess.Popen:
        """Start the child now (it starts its engine at once), if not yet started."""
        return self._proc or self._start()

    def _start(self) -> subprocess.Popen:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
        # -P: the working folder is not put first on the child's path, so a file of the
        # user's named like a module cannot stand in for vl-convert
        self._proc = subprocess.Popen([sys.executable, "-P", str(_CHILD)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, env=dict(os.environ))
        self._reader = threading.Thread(target=self._read, name="svg-reader", daemon=True)
        self._reader.start()
        return self._proc

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout
        while True:
            head = out.read(9)
            if len(head) != 9:
                return
            size = int.from_bytes(head[1:], "little")
            self._answers.append((head[0], out.read(size).decode("utf-8")))

    def _died(self, what: str) -> RuntimeError:
        assert self._proc is not None and self._stderr is not None
        self._proc.kill()
        self._proc.wait()
        self._stderr.seek(0)
        said = self._stderr.read().decode("utf-8", "replace").strip()
        return RuntimeError(f"the chart renderer ({_CHILD.name}) {what}"
                            + (f": {said.splitlines()[-1]}" if said else ""))

    def submit(self, chart, name: str) -> int:
        """Send the altair `chart`'s spec to be drawn (`name`: how an error names it);
        its index among the results."""
        # the charts are ours and tested: validating each spec against Vega-Lite's JSON
        # schema again cost a third of the rendering
        data = json.dumps(chart.to_dict(validate=False)).encode("utf-8")
        proc = self._proc or self._start()
        try:
            assert proc.stdin is not None
            proc.stdin.write(len(data).to_bytes(8, "little") + data)
            proc.stdin.flush()
        except OSError as err:  # a broken pipe: the child is gone
            raise self._died("stopped") from err
        self._names.append(name)
        return len(self._names) - 1

    def results(self) -> list[str]:
        """Every submitted chart's SVG, by index (waits for the last one)."""
        if self._proc is None:
            return []
        assert self._proc.stdin is not None and self._reader is not None
        try:
            self._proc.stdin.close()
        except OSError as err:  # a broken pipe: the child is gone
            raise self._died("stopped") from err
        self._reader.join()
        code = self._proc.wait()
        if len(self._answers) != len(self._names):
            raise self._died(f"exited with status {code} after {len(self._answers)} of "
                             f"{len(self._names)} charts")
        for name, (status, text) in zip(self._names, self._answers, strict=True):
            if status != 0:
                raise ValueError(f"chart {name!r} could not be drawn: {text}")
        return [text for _status, text in self._answers]

    def __enter__(self) -> SvgRenderer:
        return self

    def __exit__(self, *exc) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)  # the killed child's pipe ends its read at once
        for stream in (proc.stdin, proc.stdout):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):  # unflushed bytes to a killed child
                    stream.close()
        if self._stderr is not None:
            self._stderr.close()


__all__ = ["SvgRenderer"]
