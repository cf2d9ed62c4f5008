// GEMV: y = A x for a rows x cols float32 matrix (MPU's suite, Table I), with the work
// distribution and matrix layout of the MPU authors' benchmark (MPU-Sim, benchmark/gemv).
//
// Layout: the columns are cut into chunks of blockDim.x columns; the matrix is stored chunk by
// chunk, and inside a chunk row by row, so element (i, j) with j = c * blockDim.x + t is at
// A[(c * rows + i) * blockDim.x + t]. A row's piece of one chunk is blockDim.x consecutive floats
// (512 bytes for 128 threads, one MPU core's interleave unit), and with rows a multiple of the
// core count every piece of row i lies in the banks of the same core. The host pads the last
// chunk; its padding is never read.
//
// Distribution: CTA b computes rows b, b + gridDim.x, b + 2 * gridDim.x, ... (a grid-stride loop
// over rows). For one row, thread t walks the chunks, multiplying element t of each chunk's piece
// with x[c * blockDim.x + t] (read from global memory by every CTA) and accumulating in a
// register; the CTA then adds its threads' sums with a tree in dynamic shared memory (blockDim.x
// floats) and thread 0 writes y[row]. blockDim.x must be a power of two. Pointers advance in
// 64-bit steps, so no index is a 32-bit product that could overflow, and the row and column
// counters are unsigned: below 2^31 each, a counter plus a stride never wraps around.
extern "C" __global__ void gemv(const float* __restrict__ A, const float* __restrict__ x,
                                float* __restrict__ y, int rows, int cols)
{
    extern __shared__ float thread_sums[];
    const unsigned int tid = threadIdx.x;
    const size_t chunk_elements = (size_t)rows * blockDim.x;
    for (unsigned int row = blockIdx.x; row < (unsigned int)rows; row += gridDim.x) {
        const float* a = A + (size_t)row * blockDim.x + tid;
        float sum = 0.0f;
        for (unsigned int col = tid; col < (unsigned int)cols; col += blockDim.x) {
            sum += *a * x[col];
            a += chunk_elements;
        }
        thread_sums[tid] = sum;
        __syncthreads();
        // Each thread keeps its running sum in a register, so no thread reads shared memory
        // after the tree's last barrier and the next row may store without waiting again.
        for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
            if (tid < half) {
                sum += thread_sums[tid + half];
                thread_sums[tid] = sum;
            }
            __syncthreads();
        }
        if (tid == 0) {
            y[row] = sum;
        }
    }
}
