// AXPY: y = alpha * x + y in float32, one element per thread (cuBLAS saxpy's operation, with
// unit strides; MPU's suite, Table I). Argument order as cuBLAS: n, alpha, x, y. nvcc contracts
// the multiply-add into one fused multiply-add (fma.rn.f32), a single rounding.
extern "C" __global__ void axpy(int n, float alpha, const float* __restrict__ x,
                                float* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
