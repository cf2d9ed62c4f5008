"""``ndpsim run``: one workload on one system, summarized, with every counter written as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim.cli.limits import (
    MAX_DEVICE_GB,
    MAX_INSTRUCTIONS,
    MAX_LAUNCHES,
    MAX_TRACE_GB,
    limits_from,
)
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_file
from ndpsim.compilation import COMPILING_NOTICE, watching_compilation
from ndpsim.config import parse_overrides
from ndpsim.systems.gpu import (
    GpuSystem,
    load_system_config,
    system_preset_names,
    system_settings,
)
from ndpsim.workloads import SIZES, get_workload, kernel_module, run_workload


@app.command()
@reports_errors
def run(
    system: str = typer.Option(..., "--system", help="System preset (see `ndpsim systems`)."),
    workload: str = typer.Option(..., "--workload", "-w", help="Workload of the suite."),
    size: str = typer.Option("small", "--size", "-s", help=f"One of {', '.join(SIZES)}."),
    seed: int = typer.Option(
        0, "--seed", min=0, help="Seed of the inputs and of random placements."
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a config key, e.g. --set sm.count=64 (repeatable)."
    ),
    json_path: Path = typer.Option(
        None, "--json", help="Where to write every counter (default results/run-...json)."
    ),
    max_instructions: int = MAX_INSTRUCTIONS,
    max_launches: int = MAX_LAUNCHES,
    max_trace_gb: float = MAX_TRACE_GB,
    max_device_gb: float = MAX_DEVICE_GB,
) -> None:
    """Simulate a workload of the suite on a system preset and print a summary."""
    config = load_system_config(system, parse_overrides(overrides))
    # a system the model cannot build, or an unknown workload, fails before the long parts
    hardware = GpuSystem(config)
    get_workload(workload)
    limits = limits_from(max_instructions, max_launches, max_trace_gb, max_device_gb)
    path = output_file(
        json_path or Path("results") / f"run-{config.name}-{workload}-{size}.json", "--json"
    )
    with _status(f"interpreting {workload} ({size})"):
        functional = run_workload(workload, size, seed, limits=limits)
    if not functional.check.passed:
        console.print(f"[yellow]warning:[/] {workload} differs from its reference: "
                      f"{escape(functional.check.detail)}")  # fmt: skip
    with _status(f"simulating {workload} on {config.name}"):
        result = hardware.run(
            functional.traces, kernel_module(functional.workload.module_name),
            functional.memory, seed=seed,
        )  # fmt: skip
    document = {"workload": workload, "size": size, "seed": seed, **result.as_dict()}
    path.write_text(json.dumps(document, indent=2))
    _print_summary(config.name, workload, size, result)
    console.print(f"full statistics: {escape(str(path))}")


@contextmanager
def _status(text: str) -> Iterator[None]:
    """A spinner saying ``text``, or that numba is compiling while it does."""
    with (
        console.status(text) as spinner,
        watching_compilation(
            lambda: spinner.update(COMPILING_NOTICE), lambda: spinner.update(text)
        ),
    ):
        yield


def _print_summary(system: str, workload: str, size: str, result) -> None:
    s = result.summary
    table = Table(title=f"{workload} ({size}) on {system}", title_justify="left",
                  show_header=False)  # fmt: skip
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("core cycles", f"{s['core_cycles']:,}")
    table.add_row("simulated time", f"{s['time_us']:.2f} us")
    table.add_row("IPC (thread instructions per cycle)", f"{s['ipc']:.1f}")
    table.add_row("warp instructions", f"{s['warp_instructions']:,}")
    for label, key in (("GPU -> memory (TX)", "gpu_to_memory"), ("memory -> GPU (RX)",
                       "memory_to_gpu"), ("memory <-> memory", "memory_to_memory")):  # fmt: skip
        link = s["links"][key]
        table.add_row(label, f"{link['bytes']:,} B, {link['gbps']:.1f} GB/s, "
                             f"{100 * link['utilization']:.0f}% busy")  # fmt: skip
    table.add_row("DRAM row-buffer hit rate", f"{100 * s['dram_row_hit_rate']:.1f}%")
    table.add_row("L1 hit rate", f"{100 * s['l1_hit_rate']:.1f}%")
    table.add_row("L2 hit rate", f"{100 * s['l2_hit_rate']:.1f}%")
    stalls = s["stall_breakdown"]
    table.add_row("scheduler cycles without issue",
                  f"unit busy {stalls['unit_busy']:,}, dependency {stalls['dependency']:,}, "
                  f"idle {stalls['idle']:,}")  # fmt: skip
    for label, value in offload_rows(s.get("offload"), s["time_us"]):
        table.add_row(label, value)
    energy = result.energy
    parts = ", ".join(f"{k} {v / 1000:.2f}" for k, v in energy.items() if k != "total")
    table.add_row("energy (uJ)", f"{energy['total'] / 1000:.2f} ({parts})")
    table.add_row("wall time", f"{result.wall_seconds:.2f} s")
    console.print(table)


# why an instance stayed on the GPU, by the offload counter that records it
_DECLINED = (("declined_condition", "trip count below threshold"),
             ("declined_pending", "stack SM full"), ("declined_busy", "channel busy"),
             ("declined_ratio", "offload ratio"), ("declined_cache", "cache locality"))  # fmt: skip


def offload_rows(offload: dict | None, time_us: float) -> list[tuple[str, str]]:
    """Summary rows of a near-data run's offloading (none for a system without it): how much
    went near memory, why the rest stayed, and TOM's mapping or SNDP's read-and-forwards."""
    if offload is None:
        return []
    instances, offloaded = offload["instances"], offload["offloaded"]
    share = offloaded / instances if instances else 0.0
    near = offload["offloaded_instruction_fraction"]
    rows = [
        ("offloaded instances", f"{offloaded:,} of {instances:,} ({100 * share:.1f}%), "
                                f"{offload['candidate_blocks']} candidate blocks"),
        ("thread instructions near memory", f"{100 * near:.1f}%"),
    ]  # fmt: skip
    mapping = offload.get("mapping")
    learned = mapping is not None and "colocation_learned" in mapping
    reasons = [(why, offload[key]) for key, why in _DECLINED]
    # an instance that touches no memory, or that a warp reached during TOM's learning phase,
    # is never put to the controller
    undecided = instances - offloaded - sum(n for _, n in reasons)
    reasons.append(("learning phase or no memory access" if learned else "no memory access",
                    undecided))  # fmt: skip
    if instances > offloaded:
        rows.append(("kept on the GPU by", ", ".join(f"{why} {n:,}" for why, n in reasons if n)))
    blocks = offload.get("candidates")
    if blocks:  # TOM
        rows.append(("candidate blocks", f"{blocks['blocks']} ({blocks['rule']} rule), up to "
                     f"{blocks['instructions_max']} instructions and "
                     f"{blocks['live_registers_max']} live registers (a thread: "
                     f"{blocks['thread_live_registers_max']})"))  # fmt: skip
        costs = [f"{offload['redundant_instructions']:,} warp instructions run on the GPU "
                 "before a block's first access", f"{offload['stack_l1_flushes']:,} stack-SM "
                 "L1 flushes"]  # fmt: skip
        rows.append(("offloading costs", ", ".join(costs)))
    if learned:
        learning = (f"stack bits {mapping['bits']} learned from "
                    f"{mapping['learning_instances']:,} instances in "
                    f"{offload['learning_us']:.2f} us of {time_us:.2f} us")  # fmt: skip
        colocation = f"{mapping['colocation_baseline']:.2f} -> {mapping['colocation_learned']:.2f}"
        rows.append(("data mapping", f"{learning}; co-location {colocation}"))
    elif mapping is not None:
        rows.append(("data mapping", f"{mapping['bits']}; co-location {offload['colocation']:.2f}"))
    if "ratio_mean" in offload:  # SNDP's partitioned execution
        hits = 100 * offload["rdf_hit_rate"]
        rdf = f"{offload['rdf_packets']:,}, {hits:.1f}% answered by the GPU's caches"
        rows.append(("read-and-forward packets", rdf))
        final = offload["ratio_timeline"][-1][1]  # recorded in time order
        rows.append(("offload ratio", f"mean {offload['ratio_mean']:.2f} over time, "
                                      f"final {final:.2f}"))  # fmt: skip
    return rows


@app.command("systems")
@reports_errors
def list_systems(
    name: str = typer.Argument(
        None, help="A preset (or .toml file) to show key by key; omit to list the presets."
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a config key, e.g. --set sm.count=64 (repeatable)."
    ),
) -> None:
    """List the system presets, or show every key of one with the file and line that set it."""
    if name is None:
        table = Table()
        table.add_column("system")
        table.add_column("description")
        for preset in system_preset_names():
            table.add_row(preset, load_system_config(preset).description)
        console.print(table)
        return
    table = Table(title=f"{name}: every key, and what set it")
    for column in ("key", "value", "set by", "note"):
        table.add_column(column, overflow="fold")
    for setting in system_settings(name, parse_overrides(overrides)):
        value = "-" if setting.value is None else json.dumps(setting.value)
        note = escape(setting.comment)
        if setting.description:
            note += ("\n" if note else "") + f"[dim]{escape(setting.description)}[/]"
        table.add_row(escape(setting.key), escape(value), escape(setting.origin), note)
    console.print(table)
