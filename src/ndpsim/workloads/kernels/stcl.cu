// STCL: the gain computation of streamcluster's local search (Rodinia streamcluster, pgain):
// what would it save to open a facility at candidate point x?
//
// One thread per point computes its weighted squared distance to x (coordinates are
// dimension-major, coords[d * n + i], so a warp's loads coalesce and the candidate's are a
// broadcast) and compares it with the cost of its current assignment. A point that would move
// to x marks switch_membership and records the saving in the last slot of its row of work_mem;
// a point that stays adds what it would lose to the slot of its current centre
// (center_table[assign]), which the host sums per centre to decide which centres to close.
// work_mem has one row of K + 1 floats per point and is zeroed by the host before each launch.
// The distance is summed with explicitly rounded operations (no fused multiply-add), so the host
// reference reproduces every float32 rounding and no decision can flip.
struct Point {
    float weight;
    int assign;  // index of the point that is this point's centre
    float cost;  // weight * squared distance to that centre
};

extern "C" __global__ void stcl_pgain(const float* __restrict__ coords,  // dim x n
                                      const Point* __restrict__ points,
                                      const int* __restrict__ center_table,
                                      float* __restrict__ work_mem,       // n x (K + 1)
                                      unsigned char* __restrict__ switch_membership,
                                      int x, int num, int dim, int num_centers)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num) {
        return;
    }
    float dist = 0.0f;
    for (int d = 0; d < dim; d++) {
        float diff = coords[d * num + i] - coords[d * num + x];
        dist = __fadd_rn(dist, __fmul_rn(diff, diff));
    }
    Point p = points[i];
    float x_cost = __fmul_rn(dist, p.weight);
    float* lower = work_mem + (long long)i * (num_centers + 1);
    if (x_cost < p.cost) {
        switch_membership[i] = 1;
        lower[num_centers] += x_cost - p.cost;
    } else {
        lower[center_table[p.assign]] += p.cost - x_cost;
    }
}
