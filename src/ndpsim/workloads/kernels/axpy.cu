// AXPY: y = alpha * x + y in float32 (cuBLAS saxpy's operation with unit strides; MPU's suite,
// Table I), with the work distribution of the MPU authors' vector benchmark (MPU-Sim,
// benchmark/vectoradd): a fixed grid of CTAs walks the vectors in a grid-stride loop, so CTA b
// handles chunks b, b + gridDim.x, b + 2 * gridDim.x, ... of blockDim.x consecutive elements.
// At 128 threads a chunk is 512 bytes of each vector, one MPU core's interleave unit, and with a
// grid that is a multiple of the core count every chunk a CTA touches lies in its own core's
// banks. Argument order as cuBLAS: n, alpha, x, y. The index is 64-bit, so adding the stride
// never wraps around whatever the grid. nvcc contracts the multiply-add into one fused
// multiply-add (fma.rn.f32), a single rounding.
extern "C" __global__ void axpy(int n, float alpha, const float* __restrict__ x,
                                float* __restrict__ y)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride) {
        y[i] = alpha * x[i] + y[i];
    }
}
