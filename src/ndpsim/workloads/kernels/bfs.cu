// BFS: level-synchronous breadth-first search over a CSR graph, as in Rodinia's bfs.
// Each level runs two kernels: bfs_expand visits the edges of every frontier vertex (the loads
// of visited[] and cost[] are indirect, through columns[]), bfs_update turns the vertices found
// into the next frontier and tells the host whether anything changed.
extern "C" __global__ void bfs_expand(const int* __restrict__ row_offsets,
                                      const int* __restrict__ columns,
                                      unsigned char* frontier,
                                      unsigned char* next_frontier,
                                      const unsigned char* visited,
                                      int* cost,
                                      int num_nodes)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < num_nodes && frontier[v]) {
        frontier[v] = 0;
        int level = cost[v] + 1;
        for (int e = row_offsets[v]; e < row_offsets[v + 1]; e++) {
            int u = columns[e];
            if (!visited[u]) {
                cost[u] = level;
                next_frontier[u] = 1;
            }
        }
    }
}

extern "C" __global__ void bfs_update(unsigned char* frontier,
                                      unsigned char* next_frontier,
                                      unsigned char* visited,
                                      int* changed,
                                      int num_nodes)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < num_nodes && next_frontier[v]) {
        frontier[v] = 1;
        visited[v] = 1;
        next_frontier[v] = 0;
        *changed = 1;
    }
}
