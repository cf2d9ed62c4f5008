// SP: scalar products of many vector pairs, the computation and access pattern of the CUDA SDK's
// scalarProd sample. Pair v is a[v*n .. v*n+n) . b[v*n .. v*n+n). A CTA takes pairs in a
// grid-stride loop; for each pair every thread sums the products of a strided slice of the two
// vectors (coalesced loads), then the CTA adds its per-thread sums with a tree in shared memory
// and thread 0 writes the pair's result. blockDim.x must be a power of two, at most 256.
extern "C" __global__ void scalar_prod(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ result, int num_pairs, int n)
{
    __shared__ float partial[256];
    const int tid = threadIdx.x;
    for (int pair = blockIdx.x; pair < num_pairs; pair += gridDim.x) {
        const float* x = a + (size_t)pair * n;
        const float* y = b + (size_t)pair * n;
        float sum = 0.0f;
        for (int i = tid; i < n; i += blockDim.x) {
            sum += x[i] * y[i];
        }
        partial[tid] = sum;
        for (int half = blockDim.x / 2; half > 0; half /= 2) {
            __syncthreads();
            if (tid < half) {
                partial[tid] += partial[tid + half];
            }
        }
        if (tid == 0) {
            result[pair] = partial[0];
        }
        __syncthreads();  // partial[] is reused by the next pair
    }
}
