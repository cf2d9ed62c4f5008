// TTRANS: out = transpose(in) for a rows x cols float32 matrix in row-major order (out is
// cols x rows); MPU's suite (Table I, cuBLAS tensor transposition). Tiled through shared
// memory so that both the reads of `in` and the writes of `out` are coalesced:
//   - CTA (bx, by) owns the 32 x 32 tile of `in` whose top-left element is (32 by, 32 bx).
//   - The CTA is 32 threads wide and blockDim.y rows tall (32 x 8 in the suite): thread
//     (tx, ty) loads the tile's rows ty, ty + blockDim.y, ... (4 elements for 8 rows), each row
//     one coalesced read of 32 consecutive floats, into tile[row][tx].
//   - After a barrier it writes the tile's columns as rows of `out`: out row 32 bx + k, columns
//     32 by + tx, from tile[tx][k], again one coalesced 128-byte write per warp.
// The tile is padded to 33 columns: reading a column tile[0..31][k] then touches 32 different
// shared-memory banks instead of one. Elements outside the matrix (sizes that are not
// multiples of 32) are neither loaded nor stored.
#define TILE 32

extern "C" __global__ void ttrans(const float* __restrict__ in, float* __restrict__ out,
                                  int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int tx = threadIdx.x;
    int first_row = blockIdx.y * TILE;  // of `in`; also the first column of `out` written
    int first_col = blockIdx.x * TILE;  // of `in`; also the first row of `out` written

    int col = first_col + tx;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) {
        int row = first_row + k;
        if (row < rows && col < cols) {
            tile[k][tx] = in[(size_t)row * cols + col];
        }
    }
    __syncthreads();

    int out_col = first_row + tx;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) {
        int out_row = first_col + k;
        if (out_row < cols && out_col < rows) {
            out[(size_t)out_row * rows + out_col] = tile[tx][k];
        }
    }
}
