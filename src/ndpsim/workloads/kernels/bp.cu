// BP: one training step of a two-layer perceptron (n inputs -> 16 hidden -> 1 output), as in
// Rodinia's backprop. Weights are a (n + 1) x (16 + 1) row-major matrix: row 0 holds the bias
// weights, column 0 is unused, so input unit i (1-based) and hidden unit k (1-based) meet at
// weights[i * 17 + k].
//
// The number of inputs n is a multiple of 16, as Rodinia requires.
//
// bp_layerforward: a 16 x 16 CTA per 16 input units; thread (tx, ty) forms input[ty] times the
// weight from that input to hidden unit tx in shared memory, then the 16 rows are summed by a
// log-step reduction; row 0 holds the CTA's partial sum for each hidden unit. The host sums the
// partials over CTAs, applies the sigmoid and computes the output error and hidden deltas.
//
// bp_adjust_weights: every thread moves one input->hidden weight by
// eta * delta[hidden] * input + momentum * previous change, and records the change.
#define TILE 16
#define HIDDEN 16
#define STRIDE (HIDDEN + 1)

extern "C" __global__ void bp_layerforward(const float* __restrict__ input,    // n + 1 units
                                           const float* __restrict__ weights,  // (n+1) x 17
                                           float* __restrict__ partial_sums)   // CTAs x 16
{
    __shared__ float unit[TILE];
    __shared__ float product[TILE][TILE];

    int tx = threadIdx.x;  // hidden unit - 1
    int ty = threadIdx.y;  // input unit within the tile
    int row = blockIdx.y * TILE + ty + 1;  // input unit (1-based; 0 is the bias unit)

    if (tx == 0) {
        unit[ty] = input[row];
    }
    __syncthreads();

    product[ty][tx] = weights[row * STRIDE + tx + 1] * unit[ty];
    __syncthreads();

    for (int step = 1; step < TILE; step *= 2) {
        if (ty % (2 * step) == 0) {
            product[ty][tx] += product[ty + step][tx];
        }
        __syncthreads();
    }

    if (ty == 0) {
        partial_sums[blockIdx.y * HIDDEN + tx] = product[0][tx];
    }
}

extern "C" __global__ void bp_adjust_weights(const float* __restrict__ delta,  // 17, [0] unused
                                             const float* __restrict__ input,  // n + 1 units
                                             float* __restrict__ weights,
                                             float* __restrict__ prev_change,
                                             float eta, float momentum)
{
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty + 1;
    int k = tx + 1;
    int index = row * STRIDE + k;

    float change = eta * delta[k] * input[row] + momentum * prev_change[index];
    weights[index] += change;
    prev_change[index] = change;

    // The bias row (input unit 0) is updated by the first CTA's first row of threads.
    if (blockIdx.y == 0 && ty == 0) {
        float bias_change = eta * delta[k] * input[0] + momentum * prev_change[k];
        weights[k] += bias_change;
        prev_change[k] = bias_change;
    }
}
