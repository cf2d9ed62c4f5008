// NW: Needleman-Wunsch global alignment scores of two sequences of length n (MPU suite; the
// work organised as Rodinia's nw organises it). The score matrix is (n+1) x (n+1) ints, row
// pitch n+1: row 0 and column 0 hold the gap borders -i*penalty, and cell (i, j) for i, j >= 1
// is the best of
//     score(i-1, j-1) + sub(i-1, j-1),  score(i-1, j) - penalty,  score(i, j-1) - penalty,
// where sub is the n x n matrix of substitution scores of the two sequences' symbols (row
// pitch n), filled by the host. The interior is cut into b x b blocks (b = blockDim.x, n a
// multiple of b). One CTA of b threads computes one block: it copies the block's substitution
// scores, the row of scores above it and the column to its left (and the corner) into shared
// memory, sweeps the block's 2b - 1 anti-diagonals there, thread t owning row t, and writes
// the b x b results back. Blocks on one anti-diagonal of blocks are independent, so the host
// launches one kernel per block anti-diagonal: nw_upper_left for the diagonals of the
// upper-left triangle (diagonal d has d + 1 blocks), then nw_lower_right for those of the
// lower-right triangle. Dynamic shared memory: ((b+1)^2 + b^2) ints.

__device__ __forceinline__ void nw_block(int* __restrict__ score, const int* __restrict__ sub,
                                         int n, int penalty, int block_row, int block_col)
{
    extern __shared__ int smem[];
    const int b = blockDim.x;
    // The loops below run at least once. Without this, nvcc records whether they ran in a
    // predicate of its own (set with `mov.pred %p, -1`): instructions the loops do not need.
    __builtin_assume(b >= 1);
    const int w = b + 1;        // pitch of the shared tile of scores
    int* tile = smem;           // (b+1) x (b+1): row 0 and column 0 are the borders
    int* local_sub = smem + w * w;  // b x b
    const int t = threadIdx.x;
    const int pitch = n + 1;
    const int top = block_row * b;   // score row of the border above the block
    const int left = block_col * b;  // score column of the border left of it

    if (t == 0) {
        tile[0] = score[top * pitch + left];
    }
    tile[1 + t] = score[top * pitch + left + 1 + t];
    tile[(1 + t) * w] = score[(top + 1 + t) * pitch + left];
    for (int r = 0; r < b; ++r) {
        local_sub[r * b + t] = sub[(top + r) * n + left + t];
    }
    __syncthreads();

    // Step s fills column s - t of row t: one anti-diagonal of the block per step.
    for (int s = 0; s < 2 * b - 1; ++s) {
        const int c = s - t;
        if (c >= 0 && c < b) {
            const int match = tile[t * w + c] + local_sub[t * b + c];
            const int gap_down = tile[t * w + c + 1] - penalty;
            const int gap_right = tile[(t + 1) * w + c] - penalty;
            tile[(t + 1) * w + c + 1] = max(match, max(gap_down, gap_right));
        }
        __syncthreads();
    }

    for (int r = 0; r < b; ++r) {
        score[(top + 1 + r) * pitch + left + 1 + t] = tile[(r + 1) * w + 1 + t];
    }
}

// Block anti-diagonal `diagonal` (0 .. n/b - 1) of the upper-left triangle: CTA x computes the
// block in block column x, block row diagonal - x.
extern "C" __global__ void nw_upper_left(int* __restrict__ score, const int* __restrict__ sub,
                                         int n, int penalty, int diagonal)
{
    const int col = blockIdx.x;
    nw_block(score, sub, n, penalty, diagonal - col, col);
}

// Block anti-diagonal `diagonal` (n/b .. 2n/b - 2) of the lower-right triangle: its blocks start
// in block column diagonal - (n/b - 1), which is n/b - gridDim.x.
extern "C" __global__ void nw_lower_right(int* __restrict__ score, const int* __restrict__ sub,
                                          int n, int penalty, int diagonal)
{
    const int col = n / blockDim.x - gridDim.x + blockIdx.x;
    nw_block(score, sub, n, penalty, diagonal - col, col);
}
