"""A study expanded into runs: every point of its design space (the grid's combinations, times
the zipped lists, times the random samples) on every system, workload, size and seed.

A run is identified by everything its result depends on (the identity
:func:`ndpsim.experiments.store.run_identity` gives: the workload, size and seed, the parameters
given to the workload, the whole resolved configuration, the fingerprint of the code) and by its
system's name in the study. A swept ``param.KEY`` reaches the workloads that have the parameter
``KEY``; for the others, as for a system without a swept key's section, its points make one run.
Points that leave a system's configuration the same (a swept ``ndp.*`` key on a GPU without
near-data processing) make one run, not one per point, and the swept keys the system did not
receive are empty in its row. Every combination is validated by the systems before anything runs.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from ndpsim.config import merge
from ndpsim.errors import ConfigError
from ndpsim.experiments.rows import PARAM_PREFIX, Params, Run
from ndpsim.experiments.store import config_hash, run_identity, run_key
from ndpsim.seeding import generator
from ndpsim.sweeps.study import MAX_RUNS, Distribution, Study, System, nest
from ndpsim.systems import load_system_config
from ndpsim.workloads import get_workload, mix_parts
from ndpsim.workloads.params import with_params


@dataclass(frozen=True)
class Plan:
    """The runs of a study, each once, in order: inputs (workload, size, seed) outermost, so
    that the runs sharing an interpreted trace are neighbours."""

    study: Study
    runs: tuple[Run, ...]
    combinations: int  # systems x points x workloads x sizes x seeds, before merging
    points: int


def points(study: Study) -> list[dict[str, Any]]:
    """Every assignment of the swept keys: the grid's combinations (its first key varying
    slowest), times the rows of the zipped lists, times the random samples; one empty point
    when nothing is swept."""
    axes: list[list[dict[str, Any]]] = [[{key: v} for v in values]
                                        for key, values in study.grid.items()]  # fmt: skip
    if study.zipped:
        rows = zip(*study.zipped.values(), strict=True)
        axes.append([dict(zip(study.zipped, row, strict=True)) for row in rows])
    if study.random:
        axes.append(samples(study.random, study.samples, study.random_seed))
    return [{k: v for part in combination for k, v in part.items()}
            for combination in itertools.product(*axes)]  # fmt: skip


def samples(keys: dict[str, Distribution], count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` random points, each key drawn in the study's order: the same for a seed."""
    rng = generator(seed, "sweep/samples")
    out = []
    for _ in range(count):
        point = {}
        for key, d in keys.items():
            if d.kind == "uniform":
                point[key] = float(rng.uniform(*d.values))
            elif d.kind == "loguniform":
                low, high = d.values
                point[key] = float(math.exp(rng.uniform(math.log(low), math.log(high))))
            elif d.kind == "integers":
                point[key] = int(rng.integers(d.values[0], d.values[1], endpoint=True))
            else:
                point[key] = d.values[int(rng.integers(len(d.values)))]
        out.append(point)
    return out


def size_of(study: Study) -> int:
    """How many combinations ``study`` makes, counted before any is built."""
    count = len(study.systems) * len(study.workloads) * len(study.sizes) * len(study.seeds)
    for values in study.grid.values():
        count *= len(values)
    if study.zipped:
        count *= len(next(iter(study.zipped.values())))
    return count * (study.samples or 1)


def expand(study: Study) -> Plan:
    """The runs of ``study``, each combination validated (the values one by one were, when
    the study loaded; here their combinations, for checks across keys)."""
    total = size_of(study)
    if total > MAX_RUNS:
        raise ConfigError(f"{study.source}: the study makes {total:,} runs; a study makes at "
                          f"most {MAX_RUNS:,}")  # fmt: skip
    configs: dict[tuple[str, str], tuple[Any, str, dict[str, Any]]] = {}
    runs: dict[str, Run] = {}
    all_points = points(study)
    inputs = itertools.product(study.workloads, study.sizes, study.seeds)
    swept = [k for k in study.swept if not k.startswith(PARAM_PREFIX)]
    for workload, size, seed in inputs:
        mix = len(mix_parts(workload)) > 1  # a mix runs each part at its size's parameters
        declared = {} if mix else get_workload(workload).sizes[size]
        # each point's workload parameters, as a run holds them and as its key covers them
        point_params = [_params(study, point, workload, declared) for point in all_points]
        keyed = [json.loads(json.dumps(dict(params))) for params in point_params]
        for system in study.systems:
            for point, params, param in zip(all_points, point_params, keyed, strict=True):
                received = {k: v for k, v in point.items() if system.receives(k)}
                config, hashed, identity = _configured(study, system, received, configs)
                given = {"workload": workload, "size": size, "seed": seed, "param": param}
                key = run_key({**identity, **given, "study_system": system.name})
                if key not in runs:
                    runs[key] = Run(key, system.name, system.preset, config, hashed,
                                    tuple((k, received.get(k)) for k in swept), workload, size,
                                    seed, params)  # fmt: skip
    return Plan(study, tuple(runs.values()), total, len(all_points))


def _params(study: Study, point: dict[str, Any], workload: str,
            declared: dict[str, Any]) -> Params:  # fmt: skip
    """The workload parameters a run of ``workload`` (its size's ``declared`` parameters)
    gets from the study's fixed keys and the point: those it has, converted, fixed first."""
    named = ((k.removeprefix(PARAM_PREFIX), v) for k, v in (*study.fixed.items(), *point.items())
             if k.startswith(PARAM_PREFIX))  # fmt: skip
    given = {k: v for k, v in named if k in declared}
    if not given:
        return ()
    converted = with_params(workload, declared, given)
    return tuple((k, converted[k]) for k in given)


def _configured(study: Study, system: System, received: dict[str, Any],
                cache: dict) -> tuple[Any, str, dict[str, Any]]:  # fmt: skip
    """The configuration of ``system`` at a point (its own keys, the study's fixed keys and
    the point's), its hash and its run identity but for the input; built once per distinct
    configuration."""
    cache_key = (system.name, json.dumps(received, sort_keys=True))
    if cache_key not in cache:
        fixed = {k: v for k, v in study.fixed.items() if system.receives(k)}
        overrides = merge(merge(system.own, nest(fixed)), nest(received))
        try:
            config = load_system_config(system.preset, overrides)
        except ConfigError as error:
            given = ", ".join(f"{k} = {json.dumps(v)[:40]}{_line(study, k)}"
                              for k, v in received.items())  # fmt: skip
            raise ConfigError(f"{study.source}: the combination {given} on system "
                              f"{system.name!r}: {error}") from None  # fmt: skip
        identity = run_identity("", "", 0, config)
        cache[cache_key] = (config, config_hash(config), identity)
    return cache[cache_key]


def _line(study: Study, key: str) -> str:
    line = study.lines.get(key)
    return f" (line {line})" if line else ""


def counts(plan: Plan) -> dict[str, int]:
    """How a plan's size comes about, for a person: each dimension and its length."""
    study = plan.study
    return {
        "systems": len(study.systems),
        "points": plan.points,
        "workloads": len(study.workloads),
        "sizes": len(study.sizes),
        "seeds": len(study.seeds),
    }


__all__ = ["Plan", "counts", "expand", "points", "samples", "size_of"]
