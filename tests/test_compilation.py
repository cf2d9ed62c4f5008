import importlib.util
import sys

from numba import njit
from numba.core import event

from ndpsim.compilation import watch_compilation_for_good, watching_compilation
from ndpsim.experiments.runner import _flag_compilations


def _fresh_functions():
    """An outer compiled function calling an inner one, neither compiled yet."""

    @njit
    def inner(x):
        return x + 1

    @njit
    def outer(x):
        return inner(x) * 2

    return outer


def test_a_compilation_is_reported_once_with_its_callees_and_not_when_already_compiled():
    calls = []
    outer = _fresh_functions()
    with watching_compilation(lambda: calls.append("start"), lambda: calls.append("end")):
        assert outer(1) == 4
        assert outer(2) == 6  # compiled already
    assert calls == ["start", "end"]
    assert outer(3) == 8


def test_nothing_is_reported_outside_the_block():
    calls = []
    with watching_compilation(lambda: calls.append("start")):
        pass
    _fresh_functions()(1)
    assert calls == []


def test_loading_from_numba_cache_is_not_reported(tmp_path):
    source = tmp_path / "cached_module.py"
    source.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n"
                      "    return 2 * x\n")  # fmt: skip

    def load(name):
        spec = importlib.util.spec_from_file_location(name, source)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    calls = []
    try:
        with watching_compilation(lambda: calls.append("compiled")):
            assert load("cached_first").twice(2) == 4  # compiles, writes the cache
            assert load("cached_second").twice(3) == 6  # a new dispatcher: loads it
    finally:
        sys.modules.pop("cached_first", None)
        sys.modules.pop("cached_second", None)
    assert calls == ["compiled"]


def test_a_worker_raises_the_shared_flag_when_it_compiles():
    class Flag:
        raised = False

        def set(self):
            self.raised = True

    flag = Flag()
    watcher = _flag_compilations(flag)
    try:
        assert not flag.raised
        _fresh_functions()(1)
        assert flag.raised
    finally:
        event.unregister("numba:compile", watcher)


def test_a_permanent_watcher_can_be_removed():
    calls = []
    watcher = watch_compilation_for_good(lambda: calls.append("start"))
    _fresh_functions()(1)
    event.unregister("numba:compile", watcher)
    _fresh_functions()(1)
    assert calls == ["start"]
