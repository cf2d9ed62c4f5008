"""BFS: level-synchronous breadth-first search, as Rodinia's bfs (two kernels per level, the
host looping until a level finds nothing new), on a graph made like Rodinia's inputs."""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register
from ndpsim.workloads.generators import bfs_levels, rodinia_graph


@register
class BreadthFirstSearch(Workload):
    name = "bfs"
    title = "breadth-first search, frontier based (Rodinia)"
    papers = ("tom", "sndp")
    sizes = {
        "tiny": {"nodes": 2_000, "block": 256},
        "small": {"nodes": 1 << 18, "block": 256},
        "paper": {"nodes": 1 << 20, "block": 256},  # Rodinia's graph1MW_6
    }

    def inputs(self, rng):
        graph = rodinia_graph(rng, self.params["nodes"])
        return {"graph": graph, "source": 0}  # Rodinia starts from vertex 0

    def run(self, device: Device, inputs):
        graph, source = inputs["graph"], inputs["source"]
        n, block = graph.num_rows, self.params["block"]
        frontier = np.zeros(n, dtype=np.uint8)
        frontier[source] = 1
        cost = np.full(n, -1, dtype=np.int32)
        cost[source] = 0
        rows = device.to_device(graph.row_offsets, "row_offsets")
        cols = device.to_device(graph.columns, "columns")
        d_frontier = device.to_device(frontier, "frontier")
        d_next = device.zeros(n, np.uint8, "next_frontier")
        d_visited = device.to_device(frontier.copy(), "visited")
        d_cost = device.to_device(cost, "cost")
        d_changed = device.zeros(1, np.int32, "changed")
        grid = -(-n // block)
        while True:
            device.write(d_changed, np.zeros(1, dtype=np.int32))
            device.launch(
                "bfs_expand", grid, block,
                [rows, cols, d_frontier, d_next, d_visited, d_cost, np.int32(n)],
            )  # fmt: skip
            device.launch(
                "bfs_update", grid, block, [d_frontier, d_next, d_visited, d_changed, np.int32(n)]
            )
            if device.from_device(d_changed, np.int32, 1)[0] == 0:
                break
        return {"cost": device.from_device(d_cost, np.int32, n)}

    def reference(self, inputs):
        return {"cost": bfs_levels(inputs["graph"], inputs["source"])}
