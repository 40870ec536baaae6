"""Balance-simulation workbench for a turn-based hex 4X game.

Layers, each importing only those before it:
tables -> board/rng/state -> kernels -> engine -> runner -> outputs -> analysis -> report.
"""

__version__ = "0.1.0"
