"""ndpsim: near-data processing simulator for GPUs and CPUs with 3D-stacked memory."""

__version__ = "0.1.0"
