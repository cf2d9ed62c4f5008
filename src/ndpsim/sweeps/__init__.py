"""Design-space sweeps: a study file expanded into runs, run on this machine, and stored one
Parquet row per run for DuckDB to query (see docs/sweeps.md)."""

from ndpsim.experiments.store import ResultStore
from ndpsim.sweeps.api import results, sweep
from ndpsim.sweeps.study import Study, load_study

__all__ = ["ResultStore", "Study", "load_study", "results", "sweep"]
