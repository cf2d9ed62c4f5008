// SAXPY: y = a * x + y, one element per thread (BLAS level 1): the example of a workload of
// your own, kept outside the package (docs/workloads.md). Regenerate its PTX with
// `python scripts/regenerate_ptx.py docs/examples/saxpy.cu` (needs nvcc).
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
