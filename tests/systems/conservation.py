"""What every finished GPU run must account for, seen from its statistics: the trace's
instructions issued, every CTA run, every cache access resolved and every DRAM request done."""

from __future__ import annotations


def trace_totals(run) -> tuple[int, int, int]:
    """Warp instructions, thread instructions and CTAs of a workload's launches."""
    return (
        sum(t.num_warp_instructions for t in run.traces),
        sum(t.num_thread_instructions for t in run.traces),
        sum(t.info.num_ctas for t in run.traces),
    )


def issued(result, processors: str = "sm") -> tuple[int, int]:
    """Warp and thread instructions ``processors`` (GPU SMs, stack SMs, NSUs) issued."""
    counts = result.stats[processors]["total"]
    return counts["warp_instructions"], counts["thread_instructions"]


def assert_every_request_answered(run, result):
    """Every launch ran, every CTA ran, every cache access hit or missed, and DRAM completed
    every read and write it took."""
    sm, l2 = result.stats["sm"]["total"], result.stats["l2"]["total"]
    dram = result.stats["dram"]["total"]
    assert result.kernels == len(run.traces)
    assert sm["ctas"] == trace_totals(run)[2]
    assert l2["accesses"] == l2["hits"] + l2["misses"]
    assert sm["l1_accesses"] == sm["l1_hits"] + sm["l1_misses"]
    assert dram["reads_done"] == dram["reads"]
    assert dram["writes_done"] == dram["writes"]


def assert_gpu_traffic_conserved(result):
    """Without offloading, the L2 sees exactly the SMs' transactions, and DRAM exactly the L2's
    misses and write-throughs."""
    sm, l2 = result.stats["sm"]["total"], result.stats["l2"]["total"]
    dram = result.stats["dram"]["total"]
    assert l2["accesses"] == (
        sm["load_transactions"] + sm["store_transactions"] + sm["atomic_transactions"]
    )
    assert dram["reads"] == l2["dram_reads"] == l2["fills"]
    assert dram["writes"] == l2["dram_writes"]
