// SPMV: y = A x for a sparse matrix in CSR, one thread per row (the scalar CSR kernel), as in
// MiniFE's CG solve. Each thread walks its row's entries; the load of x[columns[e]] is indirect.
extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ row_offsets,
                                           const int* __restrict__ columns,
                                           const float* __restrict__ values,
                                           const float* __restrict__ x,
                                           float* __restrict__ y,
                                           int num_rows)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        int end = row_offsets[row + 1];
        float sum = 0.0f;
#pragma unroll 1
        for (int e = row_offsets[row]; e < end; e++) {
            sum += values[e] * x[columns[e]];
        }
        y[row] = sum;
    }
}
