// RD: parallel sum reduction of 32-bit integers, the computation and access pattern of the later,
// optimized kernels of the CUDA SDK's reduction sample. Each thread walks the input with a
// grid-sized stride, adding two elements (one block apart, so both loads are coalesced) per
// step; the CTA then adds its threads' sums with a shared-memory tree down to 64 values, and the
// first warp finishes with register shuffles. Thread 0 writes one partial sum per CTA; the host
// launches passes over the partial sums until a single value remains. blockDim.x must be a power
// of two from 64 to 256.
extern "C" __global__ void reduce_sum(const int* __restrict__ in, int* __restrict__ out,
                                      unsigned int n)
{
    __shared__ int sums[256];
    const unsigned int tid = threadIdx.x;
    const unsigned int step = 2u * blockDim.x * gridDim.x;
    int sum = 0;
    for (unsigned int i = blockIdx.x * 2u * blockDim.x + tid; i < n; i += step) {
        sum += in[i];
        if (i + blockDim.x < n) {
            sum += in[i + blockDim.x];
        }
    }
    sums[tid] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 32; half /= 2) {
        if (tid < half) {
            sum += sums[tid + half];
            sums[tid] = sum;
        }
        __syncthreads();
    }
    if (tid < 32) {
        sum += sums[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        if (tid == 0) {
            out[blockIdx.x] = sum;
        }
    }
}
