"""The headline figures of a GPU run as rows a person reads (``ndpsim run`` prints them)."""

from __future__ import annotations

from typing import Any

from ndpsim.systems.skeleton.results import energy_rows, headline_rows


def summary_rows(summary: dict[str, Any], energy: dict[str, float]) -> list[tuple[str, str]]:
    """(what, value) rows: time, throughput, link traffic, hit rates, stalls, offloading and
    energy."""
    s = summary
    rows = headline_rows(s)
    for label, key in (("GPU -> memory (TX)", "gpu_to_memory"), ("memory -> GPU (RX)",
                       "memory_to_gpu"), ("memory <-> memory", "memory_to_memory")):  # fmt: skip
        link = s["links"][key]
        rows.append((label, f"{link['bytes']:,} B, {link['gbps']:.1f} GB/s, "
                            f"{100 * link['utilization']:.0f}% busy"))  # fmt: skip
    rows.append(("DRAM row-buffer hit rate", f"{100 * s['dram_row_hit_rate']:.1f}%"))
    rows.append(("L1 hit rate", f"{100 * s['l1_hit_rate']:.1f}%"))
    rows.append(("L2 hit rate", f"{100 * s['l2_hit_rate']:.1f}%"))
    stalls = s["stall_breakdown"]
    rows.append(("scheduler cycles without issue",
                 f"unit busy {stalls['unit_busy']:,}, dependency {stalls['dependency']:,}, "
                 f"idle {stalls['idle']:,}"))  # fmt: skip
    rows.extend(offload_rows(s.get("offload"), s["time_us"]))
    for name, program in s.get("programs", {}).items():  # several programs at once
        rows.append((f"program {name}", f"{program['sms']} SMs, {program['launches']} launches, "
                     f"{program['time_us']:.2f} us, IPC {program['ipc']:.1f}"))  # fmt: skip
    return rows + energy_rows(energy)


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
