"""Setting an experiment's results from several seeds side by side."""

from __future__ import annotations

import math

import pytest

from ndpsim.experiments.seeds import across_seeds, document


def _doc(seed: int, speedups: dict[str, dict[str, float]], energy: float = 1.0) -> dict:
    """A results document with the shape every reproduction writes, for variants' speedups."""
    doc: dict = {v: {w: {"speedup": x, "energy": energy} for w, x in by.items()}
                 for v, by in speedups.items()}  # fmt: skip
    doc["average"] = {v: {"speedup": math.prod(by.values()) ** (1 / len(by)), "energy": energy}
                      for v, by in speedups.items()}  # fmt: skip
    doc["meta"] = {"size": "tiny", "seed": seed, "workloads": ["a", "b"],
                   "variants": list(speedups), "switches": {}}  # fmt: skip
    return doc


def test_speedups_are_combined_geometrically_and_the_rest_arithmetically():
    docs = {0: _doc(0, {"dyn": {"a": 1.0, "b": 4.0}}, energy=0.8),
            1: _doc(1, {"dyn": {"a": 4.0, "b": 4.0}}, energy=1.0)}  # fmt: skip
    summary = across_seeds(docs)
    speedup = summary["dyn"]["speedup"]
    assert speedup["per_seed"] == {0: 2.0, 1: 4.0}
    assert speedup["mean"] == pytest.approx(math.sqrt(8.0))
    assert (speedup["min"], speedup["max"]) == (2.0, 4.0)
    assert speedup["workloads"]["a"]["mean"] == pytest.approx(2.0)
    assert speedup["workloads"]["b"] == {"per_seed": {0: 4.0, 1: 4.0}, "mean": pytest.approx(4.0),
                                         "min": 4.0, "max": 4.0}  # fmt: skip
    assert summary["dyn"]["energy"]["mean"] == pytest.approx(0.9)


def test_the_mean_of_equal_speedups_stays_within_them():
    docs = {s: _doc(s, {"dyn": {"a": 0.511, "b": 0.511}}) for s in range(3)}
    speedup = across_seeds(docs)["dyn"]["speedup"]
    assert speedup["min"] <= speedup["mean"] <= speedup["max"]
    assert speedup["workloads"]["a"]["min"] <= speedup["workloads"]["a"]["mean"]


def test_the_mean_of_equal_energies_stays_within_them_so_the_plot_has_no_negative_whisker():
    # 0.1 three times sums to 0.30000000000000004; its mean was one ulp above 0.1, and the
    # seed plot refused the negative whisker after a six-minute study (tests/reports draws it)
    docs = {s: _doc(s, {"dyn": {"a": 0.5, "b": 0.5}}, energy=0.1) for s in range(3)}
    energy = across_seeds(docs)["dyn"]["energy"]
    assert energy["min"] <= energy["mean"] <= energy["max"]


def test_only_variants_every_seed_ran_are_compared():
    docs = {0: _doc(0, {"dyn": {"a": 1.0, "b": 1.0}, "naive": {"a": 0.5, "b": 0.5}}),
            1: _doc(1, {"dyn": {"a": 1.0, "b": 1.0}})}  # fmt: skip
    assert set(across_seeds(docs)) == {"dyn"}


def test_the_document_keeps_every_seed_whole():
    docs = {0: _doc(0, {"dyn": {"a": 1.0, "b": 1.0}}), 1: _doc(1, {"dyn": {"a": 2.0, "b": 2.0}})}
    doc = document(docs, "sndp")
    assert doc["meta"]["seeds"] == [0, 1] and doc["meta"]["experiment"] == "sndp"
    assert doc["seeds"]["1"] is docs[1]
    assert doc["across_seeds"]["dyn"]["speedup"]["max"] == 2.0


def test_no_seed_is_an_error():
    with pytest.raises(ValueError, match="no seeds"):
        across_seeds({})
