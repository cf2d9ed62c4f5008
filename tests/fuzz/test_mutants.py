"""PTX mutants of the committed kernels end in an ndpsim error or a result, never a crash."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndpsim.fuzz import TARGETED, kernel_texts, mutate, signature, try_mutant

MODULES = sorted(kernel_texts())


def _fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


#: A mutant's time limit: generous, so that a loaded CI machine does not report a slow load as
#: a hang (a runaway is stopped by the interpreter's budgets long before).
SECONDS = 120.0


def _report(outcome, text: str) -> str:
    return f"{outcome.kind} at {outcome.stage}: {outcome.signature} {outcome.detail}\n{text}"


@_fuzz(300)
@given(st.sampled_from(MODULES), st.randoms(use_true_random=False))
def test_loading_a_mutant_never_crashes(module, rng):
    text = mutate(kernel_texts()[module], rng)
    outcome = try_mutant(text, module, run=False, seconds=SECONDS)
    assert outcome.kind in ("accepted", "rejected"), _report(outcome, text)


@_fuzz(60)
@given(st.sampled_from(MODULES), st.randoms(use_true_random=False))
def test_running_a_mutant_never_crashes_nor_hangs(module, rng):
    text = mutate(kernel_texts()[module], rng)
    outcome = try_mutant(text, module, seconds=SECONDS)
    assert outcome.kind in ("accepted", "rejected"), _report(outcome, text)


@pytest.mark.parametrize("kind", sorted(TARGETED))
def test_every_targeted_mutation_kind_is_refused_or_survived(kind):
    rng = random.Random(kind)
    texts = kernel_texts()
    changed = 0
    for module in MODULES:
        original = texts[module]
        lines = original.split("\n")
        for k, line in enumerate(lines):
            mutated = TARGETED[kind](line, rng)
            if mutated == line:
                continue
            changed += 1
            text = "\n".join([*lines[:k], mutated, *lines[k + 1 :]])
            outcome = try_mutant(text, module, run=False, seconds=SECONDS)
            assert outcome.kind in ("accepted", "rejected"), _report(outcome, text)
            break
    assert changed, f"mutation {kind!r} changed no kernel"


def test_the_unmutated_kernels_are_accepted_and_run():
    for module, text in kernel_texts().items():
        assert try_mutant(text, module).kind == "accepted", module


def test_a_crash_signature_names_the_exception_and_the_innermost_ndpsim_frame():
    try:
        {}["x"]
    except KeyError as exc:
        assert signature(exc).startswith("KeyError test_mutants.py:")
