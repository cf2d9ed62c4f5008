"""Imports point one way: every package of ndpsim sits in a layer and imports only from its own
layer or lower ones (errors -> frontend -> analysis -> trace -> functional -> engine -> hw ->
policy -> systems -> experiments and sweeps -> reports -> api -> cli), so a component never
reaches up into what is built from it. Every module of the package must be placed in a layer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "ndpsim"

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "errors textfile toml_lines registry hostmemory compilation numba_cache config provenance "
        "seeding processes",
        "frontend",
        "analysis",
        "trace traceio",
        "simt ptx workloads fuzz",  # the functional model: running kernels for their results
        "engine",
        "hw energy",
        "policy",
        "systems",
        "experiments sweeps",
        "reports",
        "api",
        "cli __main__",  # python -m ndpsim runs the command line
    )
)
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}


def _imports(path: Path):
    """(line, package of ndpsim) for every import of the package in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "ndpsim" and len(parts) > 1:
                yield node.lineno, parts[1]


def _package_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def test_every_module_is_in_a_layer():
    unplaced = {_package_of(p) for p in PACKAGE.rglob("*.py")} - set(LAYER_OF) - {"__init__"}
    assert not unplaced, f"place these in LAYERS: {sorted(unplaced)}"


def test_imports_point_down_the_layers():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _package_of(path)
        if own == "__init__":
            continue
        for line, imported in _imports(path):
            if LAYER_OF.get(imported, -1) > LAYER_OF[own]:
                upward.append(f"{path.relative_to(PACKAGE)}:{line} imports ndpsim.{imported}")
    assert not upward, "imports pointing up the layers:\n" + "\n".join(upward)


#: Inside ``systems``: the shared modules every kind is built on, below the kinds' folders.
SYSTEMS_SHARED = frozenset({"skeleton", "stepping", "kinds", "dram_trace", "offload"})


def _systems_imports(path: Path):
    """(line, module of ndpsim.systems) for every import of ``ndpsim.systems.X`` in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[:2] == ["ndpsim", "systems"] and len(parts) > 2:
                yield node.lineno, parts[2]


def test_the_system_skeleton_names_no_system_kind():
    """The skeleton (launch loop, memory, links, checks, timeline, results) is what kinds reuse: it
    imports only the shared modules of ``systems``, never a kind's folder (``systems/gpu``)."""
    skeleton = PACKAGE / "systems" / "skeleton"
    assert sorted(p.stem for p in skeleton.glob("*.py")) == [
        "__init__", "checks", "links", "memory", "program", "results", "timeline",
    ]  # fmt: skip
    kinds = [
        f"{path.relative_to(PACKAGE)}:{line} imports ndpsim.systems.{module}"
        for path in sorted(skeleton.glob("*.py"))
        for line, module in _systems_imports(path)
        if module not in SYSTEMS_SHARED
    ]
    assert not kinds, "the skeleton reaches into a system kind:\n" + "\n".join(kinds)
