// GEMV: y = A x for a rows x cols float32 matrix stored column-major, as cuBLAS stores it
// (element (i, j) at A[j * rows + i]); MPU's suite (Table I, cuBLAS). One thread owns row i
// and walks the columns, keeping its dot product in a register: at every column j the 32
// threads of a warp read 32 consecutive elements of column j (one coalesced 128-byte line) and
// all read the same x[j] (a broadcast). The column pointer advances by `rows` elements, so no
// index is ever formed as a 32-bit product that could overflow.
extern "C" __global__ void gemv(const float* __restrict__ A, const float* __restrict__ x,
                                float* __restrict__ y, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        const float* a = A + i;
        float sum = 0.0f;
        for (int j = 0; j < cols; ++j) {
            sum += *a * x[j];
            a += rows;
        }
        y[i] = sum;
    }
}
