"""ndpsim: near-data processing simulator for GPUs and CPUs with 3D-stacked memory."""

from pathlib import Path

from ndpsim import numba_cache

__version__ = "0.1.0"

# before any module of the package compiles: numba picks a function's cache locator when the
# function is decorated (see ndpsim.numba_cache)
numba_cache.install(__name__, Path(__file__).parent)
