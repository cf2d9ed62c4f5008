"""Seeded input generators shared by workloads: graphs and sparse matrices.

No dataset can be downloaded, so graph inputs are R-MAT graphs with the Graph500 parameters and
sparse matrices come from stencils or uniform random patterns, all drawn from a NumPy generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Graph500 R-MAT quadrant probabilities (a, b, c; d = 1 - a - b - c).
GRAPH500_RMAT = (0.57, 0.19, 0.19)


@dataclass(frozen=True)
class CSR:
    """A sparse matrix or graph in compressed sparse row form (int32 indices)."""

    row_offsets: np.ndarray
    columns: np.ndarray
    values: np.ndarray | None = None

    @property
    def num_rows(self) -> int:
        return len(self.row_offsets) - 1

    @property
    def num_entries(self) -> int:
        return len(self.columns)


def csr_from_edges(num_rows: int, rows: np.ndarray, cols: np.ndarray, values=None) -> CSR:
    """Build CSR from (row, col[, value]) triples; duplicates are kept, columns sorted per row."""
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    counts = np.bincount(rows, minlength=num_rows)
    offsets = np.zeros(num_rows + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    vals = None if values is None else np.asarray(values)[order]
    return CSR(offsets, cols.astype(np.int32), vals)


def rmat_graph(
    rng: np.random.Generator,
    scale: int,
    edge_factor: int = 16,
    probabilities: tuple[float, float, float] = GRAPH500_RMAT,
) -> CSR:
    """An undirected R-MAT graph with ``2**scale`` vertices: edges are drawn quadrant by
    quadrant, mirrored, stripped of self-loops and duplicates, and vertices are relabelled by a
    random permutation (as Graph500 does) so high-degree vertices are not clustered."""
    n = 1 << scale
    m = n * edge_factor
    a, b, c = probabilities
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        right = (r >= a) & (r < a + b) | (r >= a + b + c)
        down = r >= a + b
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    src, dst = perm[src], perm[dst]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    both = np.unique(np.concatenate([src * n + dst, dst * n + src]))
    return csr_from_edges(n, both // n, both % n)


def rodinia_graph(
    rng: np.random.Generator, num_nodes: int, min_edges: int = 2, max_edges: int = 4
) -> CSR:
    """An undirected graph as Rodinia's BFS input generator makes them (the inputs TOM and SNDP
    ran): each vertex draws ``min_edges..max_edges`` uniformly random neighbours, and every edge
    is added in both directions (average degree about 6, as in ``graph1MW_6``)."""
    per_node = rng.integers(min_edges, max_edges + 1, size=num_nodes)
    src = np.repeat(np.arange(num_nodes), per_node)
    dst = rng.integers(0, num_nodes, size=len(src))
    return csr_from_edges(num_nodes, np.concatenate([src, dst]), np.concatenate([dst, src]))


def bfs_levels(graph: CSR, source: int) -> np.ndarray:
    """Hop distance from ``source`` to every vertex (-1 if unreachable), level by level."""
    n = graph.num_rows
    level = np.full(n, -1, dtype=np.int32)
    level[source] = 0
    frontier = np.array([source])
    depth = 0
    while len(frontier):
        depth += 1
        starts = graph.row_offsets[frontier]
        ends = graph.row_offsets[frontier + 1]
        neighbours = (
            np.concatenate([graph.columns[s:e] for s, e in zip(starts, ends, strict=True)])
            if len(frontier)
            else np.zeros(0, np.int32)
        )
        fresh = np.unique(neighbours[level[neighbours] < 0])
        level[fresh] = depth
        frontier = fresh
    return level
