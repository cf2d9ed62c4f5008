// HIST: 256-bin histogram of float32 values binned by value, the two kernels and the work
// distribution of the MPU authors' benchmark (GitHub GD06/mpu-sim_distribution,
// benchmark/histogram).
//
// histogram_partial: a fixed grid walks the values grid-stride (thread t of CTA b takes values
// b * blockDim.x + t, then that plus gridDim.x * blockDim.x, ...). A value v goes to bin
// (int)(255.0f * v), truncated toward zero and clamped to 0..255, so [0, 1) fills bins 0..254.
// Each CTA counts into its own 256 bins in shared memory with shared atomics and then writes
// them out as its partial histogram: partials[blockIdx.x * 256 + bin].
//
// histogram_reduce: one thread per bin adds that bin over the `parts` partial histograms.
//
// Any block size works: clearing and writing out the shared bins stride over them.
#define HIST_BINS 256

extern "C" __global__ void histogram_partial(const float* __restrict__ values, int count,
                                             unsigned int* __restrict__ partials)
{
    __shared__ unsigned int bins[HIST_BINS];
    for (int bin = threadIdx.x; bin < HIST_BINS; bin += blockDim.x) {
        bins[bin] = 0;
    }
    __syncthreads();
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        const int bin = (int)(255.0f * values[i]);
        atomicAdd(&bins[min(max(bin, 0), HIST_BINS - 1)], 1u);
    }
    __syncthreads();
    for (int bin = threadIdx.x; bin < HIST_BINS; bin += blockDim.x) {
        partials[blockIdx.x * HIST_BINS + bin] = bins[bin];
    }
}

extern "C" __global__ void histogram_reduce(const unsigned int* __restrict__ partials, int parts,
                                            unsigned int* __restrict__ histogram)
{
    const int bin = blockIdx.x * blockDim.x + threadIdx.x;
    if (bin < HIST_BINS) {
        unsigned int total = 0;
        for (int part = 0; part < parts; ++part) {
            total += partials[part * HIST_BINS + bin];
        }
        histogram[bin] = total;
    }
}
