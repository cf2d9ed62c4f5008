"""An MPU run's result: the skeleton's, with what ran near the banks and what crossed the TSVs
and the mesh among the rows a person reads."""

from __future__ import annotations

from dataclasses import dataclass

from ndpsim.systems.skeleton.results import SystemRunResult, energy_rows, headline_rows


def _traffic(links: dict) -> str:
    return (f"{links['bytes']:,} B, {links['gbps']:.1f} GB/s, "
            f"{100 * links['utilization']:.0f}% busy")  # fmt: skip


@dataclass
class MpuRunResult(SystemRunResult):
    def summary_rows(self) -> list[tuple[str, str]]:
        s = self.summary
        a, moves = s["accesses"], s["register_moves"]
        hits = a["remote_cache_hits"]
        cached = f", {hits:,} from the remote cache" if hits else ""
        return [
            *headline_rows(s),
            ("DRAM row-buffer hit rate", f"{100 * s['dram_row_hit_rate']:.1f}%"),
            ("warp instructions run near the banks", f"{100 * s['near_bank_share']:.1f}%"),
            ("global accesses sent whole / split",
             f"{a['whole']:,} / {a['split']:,} (split into {a['local_transactions']:,} local "
             f"and {a['remote_transactions']:,} remote transactions{cached})"),
            ("registers moved over the TSVs",
             f"{moves['to_far']:,} down, {moves['to_near']:,} up; {moves['written_back']:,} "
             "split loads written back near"),
            ("TSV buses", _traffic(s["tsv"])),
            ("mesh links", _traffic(s["mesh"])),
            *energy_rows(self.energy),
        ]  # fmt: skip
