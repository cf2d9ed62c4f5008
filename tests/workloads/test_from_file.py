"""Workloads defined outside the package: a .py file (``--workload path.py``) and a module
registered through the ``ndpsim.plugins`` entry-point group, each written as the suite's are."""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from ndpsim import registry
from ndpsim.errors import WorkloadError
from ndpsim.workloads import base, execute_workload, get_workload, run_workload
from ndpsim.workloads.from_file import load_workload_file

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture(autouse=True)
def own_registry(monkeypatch):
    """Workloads registered by a test are forgotten after it (the suite's stay)."""
    base.workload_names()
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A directory on sys.path for a plug-in's files, its modules forgotten after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if str(tmp_path) in (getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]


def test_the_example_workload_runs_and_matches_its_reference():
    cls = load_workload_file(EXAMPLES / "saxpy_workload.py")
    assert cls.name == "saxpy" and load_workload_file(EXAMPLES / "saxpy_workload.py") is cls
    workload = cls("tiny", 0)
    assert workload.ptx_file == EXAMPLES / "saxpy.ptx"
    run = execute_workload(workload)
    assert run.check.passed, run.check.detail
    assert run.module.path == str(EXAMPLES / "saxpy.ptx") and run.num_warp_instructions > 0


def test_the_example_ptx_was_generated_from_its_source():
    cu = EXAMPLES / "saxpy.cu"
    header = cu.with_suffix(".ptx").read_text().splitlines()[0]
    match = re.search(r"sha256=([0-9a-f]{64})", header)
    assert match and match.group(1) == hashlib.sha256(cu.read_bytes()).hexdigest(), (
        "saxpy.cu changed: run scripts/regenerate_ptx.py docs/examples/saxpy.cu"
    )


def _workload_file(directory: Path, body: str, name: str = "mine.py") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


SIZES = '{"tiny": {}, "small": {}, "paper": {}}'


@pytest.mark.parametrize(("body", "complaint"), [
    ("x = 1\n", "defines no workload: expected a subclass of ndpsim.workloads.Workload"),
    (f"""\
     from ndpsim.workloads import Workload
     class A(Workload):
         name = "a"
         sizes = {SIZES}
         def inputs(self, rng): return {{}}
         def run(self, device, inputs): return {{}}
     """, "workload class A does not define reference"),
    (f"""\
     from ndpsim.workloads import Workload
     class A(Workload):
         name = "a"
         sizes = {SIZES}
         def inputs(self, rng): return {{}}
         def run(self, device, inputs): return {{}}
         def reference(self, inputs): return {{}}
     class B(A):
         name = "b"
     """, "defines 2 workloads (A, B); expected one per file"),
    ("""\
     from ndpsim.workloads import Workload
     class A(Workload):
         name = "a"
         sizes = {"tiny": {}}
         def inputs(self, rng): return {}
         def run(self, device, inputs): return {}
         def reference(self, inputs): return {}
     """, "workload 'a' does not define sizes small, paper"),
    ("import numpy\n\nraise ValueError('no inputs here')\n",
     "mine.py:3: importing it failed: ValueError: no inputs here"),
    ("def broken(:\n", "mine.py:1: importing it failed: SyntaxError"),
    (f"""\
     from ndpsim.workloads import Workload, register
     @register
     class A(Workload):
         name = "vadd"
         sizes = {SIZES}
         def inputs(self, rng): return {{}}
         def run(self, device, inputs): return {{}}
         def reference(self, inputs): return {{}}
     """, "mine.py:2: importing it failed: WorkloadError: two workloads are named 'vadd'"),
])  # fmt: skip
def test_a_workload_file_that_defines_no_usable_workload_is_refused(tmp_path, body, complaint):
    path = _workload_file(tmp_path, body)
    with pytest.raises(WorkloadError) as error:
        load_workload_file(path)
    assert str(path) in str(error.value) and complaint in str(error.value)


def test_a_missing_workload_file_is_named(tmp_path):
    with pytest.raises(WorkloadError, match=r"nope\.py: no such workload file"):
        load_workload_file(tmp_path / "nope.py")


def test_a_workload_whose_ptx_is_missing_is_named(tmp_path):
    source = (EXAMPLES / "saxpy_workload.py").read_text()
    path = _workload_file(tmp_path, source.replace('"saxpy.ptx"', '"gone.ptx"'))
    workload = load_workload_file(path)("tiny", 0)
    with pytest.raises(WorkloadError, match=r"gone\.ptx: cannot read the PTX file"):
        workload.ptx_module()


def test_an_installed_plug_in_registers_a_workload(workdir, monkeypatch):
    source = (EXAMPLES / "saxpy_workload.py").read_text()
    (workdir / "my_saxpy.py").write_text(source.replace('name = "saxpy"', 'name = "plugged"'))
    shutil.copyfile(EXAMPLES / "saxpy.ptx", workdir / "saxpy.ptx")
    info = workdir / "my_study-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-study\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ndpsim.plugins]\nplugged = my_saxpy\n")
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    assert get_workload("plugged").ptx == "saxpy.ptx"
    run = run_workload("plugged", "tiny")
    assert run.check.passed and run.module.path == str(workdir / "saxpy.ptx")
