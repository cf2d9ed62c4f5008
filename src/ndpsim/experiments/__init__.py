"""Reproducing the papers: a registry of papers, each one module that states as data what it
compares (variants, workloads, figures, the paper's numbers, its own switches), and the
machinery every paper shares: the runner that spreads workloads over processes, the result
store of finished runs (which sweeps share), ``--set`` overrides, averages and the comparison
of several seeds.

Experiments produce results documents (plain data); :mod:`ndpsim.reports` turns them into
tables and plots.
"""

from ndpsim.experiments.paper import (
    Figure,
    LineFigure,
    Paper,
    PaperNumbers,
    Study,
    Switch,
    Table,
    get_paper,
    papers,
    register,
)
from ndpsim.experiments.runner import Variant

__all__ = ["Figure", "LineFigure", "Paper", "PaperNumbers", "Study", "Switch", "Table",
           "Variant", "get_paper", "papers", "register"]  # fmt: skip
