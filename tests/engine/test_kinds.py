"""Event kinds declared by name: distinct numbers without a hand-kept list, the same in every
process whatever the order of imports, and a clash refused when it is declared."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ndpsim.engine import kinds

_GPU_KINDS = (
    "import json\n"
    "{imports}\n"
    "from ndpsim.hw.core import sm\n"
    "from ndpsim.systems.gpu import model\n"
    "print(json.dumps(sorted((k, getattr(m, k)) for m in (sm, model) for k in dir(m)"
    " if k.startswith('EV_'))))"
)


def _kinds_in_a_fresh_process(imports: str) -> str:
    code = _GPU_KINDS.format(imports=imports)
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def test_a_modules_kinds_are_distinct_and_declaring_them_again_gives_the_same_numbers():
    numbers = kinds.declare("tests.engine.kinds_a", "ARRIVE", "DEPART", "TICK")
    assert len(set(numbers)) == 3
    assert kinds.declare("tests.engine.kinds_a", "TICK", "ARRIVE") == (numbers[2], numbers[0])
    # the same name in another module is another kind
    assert kinds.declare("tests.engine.kinds_b", "ARRIVE")[0] not in numbers


def test_the_gpu_models_kinds_are_distinct_and_the_same_whatever_imports_first():
    first = _kinds_in_a_fresh_process("")
    assert first == _kinds_in_a_fresh_process("import ndpsim.systems.dram_trace")
    assert first == _kinds_in_a_fresh_process("import ndpsim.systems.gpu.model")
    numbers = dict(json.loads(first))  # the model also names the SM's kinds
    assert len(set(numbers.values())) == len(numbers) == 12


def test_a_name_hashing_to_a_number_already_declared_is_refused(monkeypatch):
    monkeypatch.setattr(kinds, "_number", lambda qualified: 7)
    monkeypatch.setattr(kinds, "_declared", {})
    assert kinds.declare("tests.engine.kinds_c", "FIRST") == (7,)
    with pytest.raises(ValueError, match=r"kinds_c.SECOND hashes to 7, the number of "
                       r"tests.engine.kinds_c.FIRST"):  # fmt: skip
        kinds.declare("tests.engine.kinds_c", "SECOND")
