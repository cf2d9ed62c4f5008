"""The papers ndpsim reproduces, one module each; every module registers its own
:class:`~ndpsim.experiments.paper.Paper`, and the registry imports them all."""
