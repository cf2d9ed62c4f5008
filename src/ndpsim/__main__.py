"""``python -m ndpsim``: the ``ndpsim`` command, for an environment whose scripts are not on the
path. The command line lives in :mod:`ndpsim.cli.main`, imported here once, so its commands
register on the one app that runs (``python -m ndpsim.cli.main`` would import that module
twice, as ``__main__`` and by name, and run the copy its commands did not register on)."""

from ndpsim.cli.main import app

app(prog_name="ndpsim")
