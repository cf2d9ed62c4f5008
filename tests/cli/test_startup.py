"""The command line starts light: ``import ndpsim``, ``ndpsim --help`` and ``ndpsim systems``
import none of the heavy libraries (numba compiles the simulator, matplotlib plots, Ray and
DuckDB run sweeps and store results), and the root's list of commands, which lets it name them
without importing them, agrees with the commands themselves."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from ndpsim.cli.main import COMMANDS, app

HEAVY = ("numba", "llvmlite", "matplotlib", "ray", "duckdb", "pyarrow")


def _imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code`` (whatever it
    prints, the list is the last line of its output)."""
    probe = f"""
import sys
try:
{chr(10).join("    " + line for line in code.splitlines())}
except SystemExit:
    pass
print()
print(" ".join(sorted(sys.modules)))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    return set(done.stdout.splitlines()[-1].split())


def _packages(modules: set[str]) -> set[str]:
    return {module.split(".")[0] for module in modules}


def test_import_ndpsim_imports_no_heavy_library():
    assert not _packages(_imported_after("import ndpsim")) & set(HEAVY)


@pytest.mark.parametrize("arguments", [["--help"], ["systems"], ["--version"]])
def test_light_commands_import_no_heavy_library(arguments):
    code = f"from ndpsim.cli.main import app\napp({arguments!r}, prog_name='ndpsim')"
    imported = _imported_after(code)
    assert "ndpsim.cli.main" in imported  # the probe ran the command
    assert not _packages(imported) & set(HEAVY)


def test_each_listed_line_is_the_first_paragraph_of_the_commands_own_help():
    root = typer.main.get_command(app)
    root.load_all()
    for name, (_, line) in COMMANDS.items():
        own = root.commands[name].help.split("\n\n")[0]
        assert " ".join(own.split()) == line, name


def test_every_command_is_listed():
    root = typer.main.get_command(app)
    root.load_all()
    assert set(root.commands) == set(COMMANDS)


def test_root_help_lists_every_command_without_importing_it():
    imported = _imported_after(
        "from ndpsim.cli.main import app\napp(['--help'], prog_name='ndpsim')"
    )
    assert not {module for module, _ in COMMANDS.values()} & imported
