"""A CPU run's result: the skeleton's, with each core's IPC, the caches' hit rates, the
coherence traffic, the DRAM and the links (with 3D stacks) among the rows a person reads."""

from __future__ import annotations

from dataclasses import dataclass

from ndpsim.systems.skeleton.results import SystemRunResult, energy_rows


@dataclass
class CpuRunResult(SystemRunResult):
    def summary_rows(self) -> list[tuple[str, str]]:
        s = self.summary
        rates, coherence = s["hit_rates"], s["coherence"]
        return [
            ("core cycles", f"{s['core_cycles']:,}"),
            ("simulated time", f"{s['time_us']:.2f} us"),
            ("instructions", f"{s['warp_instructions']:,}"),
            ("IPC per core", " ".join(f"{x:.2f}" for x in s["ipc_per_core"])),
            ("hit rate L1 / L2 / LLC",
             " / ".join(f"{100 * rates[k]:.1f}%" for k in ("l1", "l2", "llc"))),
            ("branch mispredictions", f"{100 * s['branch_mispredict_rate']:.1f}%"),
            ("coherence", f"{coherence['invalidations']:,} invalidations, "
                          f"{coherence['downgrades']:,} downgrades, {coherence['upgrades']:,} "
                          f"upgrades, {coherence['back_invalidations']:,} back-invalidations"),
            ("prefetches / write-backs", f"{s['prefetches']:,} / {s['writebacks']:,}"),
            ("DRAM reads / writes, row-buffer hit rate",
             f"{s['dram_reads']:,} / {s['dram_writes']:,}, "
             f"{100 * s['dram_row_hit_rate']:.1f}%"),
            *_link_rows(s.get("links")),
            *[(f"program {name}", f"{p['cores']} cores, {p['launches']} launches, "
                                  f"{p['time_us']:.2f} us, IPC per core {p['ipc_per_core']:.2f}")
              for name, p in s.get("programs", {}).items()],  # several programs at once
            *energy_rows(self.energy),
        ]  # fmt: skip


def _link_rows(links: dict | None) -> list[tuple[str, str]]:
    """With 3D stacks behind links: each direction's bandwidth and utilization."""
    if links is None:
        return []
    return [
        (
            f"links {name.replace('_', ' ')}",
            f"{figures['gbps']:.1f} GB/s, {100 * figures['utilization']:.1f}% busy",
        )
        for name, figures in links.items()
        if name != "memory_to_memory" or figures["bytes"]
    ]
