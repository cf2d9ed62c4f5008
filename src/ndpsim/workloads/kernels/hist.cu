// HIST: 256-bin histogram of bytes, the per-CTA privatized pattern of the CUDA SDK's histogram256
// sample (as in MPU's suite). Each CTA clears a 256-bin sub-histogram in shared memory, walks the
// input four bytes (one 32-bit word) at a time in a grid-stride loop adding each byte to its bin
// with a shared-memory atomicAdd, and finally merges its sub-histogram into the global histogram
// with one global atomicAdd per non-empty bin. Any block size works: clearing and merging
// stride over the bins.
extern "C" __global__ void histogram256(const unsigned int* __restrict__ words, int num_words,
                                        unsigned int* __restrict__ histogram)
{
    __shared__ unsigned int bins[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        bins[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < num_words; i += blockDim.x * gridDim.x) {
        unsigned int w = words[i];
        atomicAdd(&bins[w & 0xffu], 1u);
        atomicAdd(&bins[(w >> 8) & 0xffu], 1u);
        atomicAdd(&bins[(w >> 16) & 0xffu], 1u);
        atomicAdd(&bins[w >> 24], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int count = bins[b];
        if (count != 0) {
            atomicAdd(&histogram[b], count);
        }
    }
}
