// PR: float32 sum of a vector, the two-launch parallel reduction of MPU's suite (Table I, after
// CUB), with the work distribution of the MPU authors' benchmark (MPU-Sim, benchmark/vectorsum).
//
// Each CTA walks the input in a grid-stride loop, so CTA b adds chunks b, b + gridDim.x, ... of
// blockDim.x consecutive elements (512 bytes at 128 threads, one MPU core's interleave unit),
// each thread accumulating in a register. The CTA then adds its threads' sums with a tree in
// dynamic shared memory (blockDim.x floats) and thread 0 writes the CTA's sum to sums[blockIdx.x].
// The host launches the same kernel a second time, one CTA over the first launch's per-CTA sums,
// to get the total. blockDim.x must be a power of two. The index is 64-bit, so adding the stride
// never wraps around whatever the grid.
extern "C" __global__ void pr(const float* __restrict__ values, float* __restrict__ sums, int n)
{
    extern __shared__ float thread_sums[];
    const unsigned int tid = threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + tid; i < (size_t)n; i += stride) {
        sum += values[i];
    }
    thread_sums[tid] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            sum += thread_sums[tid + half];
            thread_sums[tid] = sum;
        }
        __syncthreads();
    }
    if (tid == 0) {
        sums[blockIdx.x] = sum;
    }
}
