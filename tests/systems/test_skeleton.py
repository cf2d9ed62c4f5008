"""The skeleton's launch loop refuses what a kind's machine cannot give before simulating."""

from __future__ import annotations

import pytest

from ndpsim.engine import loop
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.systems.skeleton.program import LaunchView, Machine, program_steps


class _Bare(Machine):
    """A machine with neither epoch() nor sampler(); nothing of it may run."""

    view = LaunchView()

    def launch(self, index, trace, now_ps):
        raise AssertionError("nothing is launched once the run is refused")

    def launch_end(self, index, trace, launched, end_ps):
        raise AssertionError

    def result(self, time_ps, launches, wall_seconds):
        raise AssertionError


@pytest.mark.parametrize(("on_epoch", "timeline", "message"), [
    (print, None, "_Bare hands nothing to on_epoch: it defines no epoch()"),
    (None, Timeline(), "_Bare records no timeline: it defines no sampler()"),
])  # fmt: skip
def test_a_hook_or_timeline_the_machine_cannot_serve_is_refused_up_front(on_epoch, timeline,
                                                                          message):  # fmt: skip
    steps = program_steps(_Bare, ["a launch"], loop.Pause(), on_epoch, timeline)
    with pytest.raises(ConfigError, match=message):
        next(steps)
