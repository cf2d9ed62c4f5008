// NW: Needleman-Wunsch scores of a batch of independent 32 x 32 alignment tiles, the layout and
// work distribution of the MPU authors' benchmark (GitHub GD06/mpu-sim_distribution,
// benchmark/nw). One launch; CTAs of NW_LENGTH = 32 threads walk the pairs grid-stride (CTA b
// takes pair slots b, b + gridDim.x, ...), and one CTA computes one pair's whole tile in shared
// memory.
//
// Pair q's tile has a top border row top[q * 32 + x], a left border column left[q * 32 + y] and a
// 32 x 32 matrix of substitution scores; cell (y, x), numbered from 1, is the best of
//     cell(y-1, x-1) + substitution(y-1, x-1),  cell(y, x-1) - penalty,  cell(y-1, x) - penalty,
// with cell(0, 0) = 0. The substitution scores and the output scores are stored row-interleaved
// over the pairs: row y of pair q at [(y * pairs + q) * 32 + x], so a warp's access to one row is
// 128 consecutive bytes and, with pairs a multiple of 512, every row of a pair sits in the same
// core's banks (the rows are 64 KiB apart).
//
// Thread t owns tile column t + 1. After loading the borders and the substitution scores, the
// CTA sweeps the 63 anti-diagonals: at step s thread t computes row s - t + 1 if it is in the
// tile, then the CTA synchronises. Then it writes the tile's 32 rows out.
//
// Which pair a slot computes (stored_pair): on MPU's near-bank mapping a core owns 512
// consecutive bytes in turn, 4 pairs' 128-byte rows. The authors' driver places CTA i on core
// (i / 4) % 128, the core holding pair i; a breadth-first CTA scheduler places CTA b on core
// b % 128 instead, so in each complete group of 512 slots, slot 128 a + c (c < 128, a < 4)
// computes pair 4 c + a of the group: a pair held by core c, the core of CTA c. Slots of a last,
// partial group compute their own pair.
#define NW_LENGTH 32
#define NW_GROUP (128 * 4)  // 128 cores, 4 pairs' rows to a core's 512 bytes

__device__ __forceinline__ int stored_pair(int slot, int pairs)
{
    const int group = slot - slot % NW_GROUP;
    if (group + NW_GROUP > pairs) {
        return slot;
    }
    const int within = slot % NW_GROUP;
    return group + (within % 128) * 4 + within / 128;
}

extern "C" __global__ void nw_tiles(const int* __restrict__ top, const int* __restrict__ left,
                                    const int* __restrict__ substitution,
                                    int* __restrict__ scores, int pairs, int penalty)
{
    __shared__ int tile[NW_LENGTH + 1][NW_LENGTH + 1];  // row 0 and column 0: the borders
    __shared__ int local_substitution[NW_LENGTH][NW_LENGTH];
    const int t = threadIdx.x;
    const int row_pitch = pairs * NW_LENGTH;  // between rows of one pair, in ints

    for (int slot = blockIdx.x; slot < pairs; slot += gridDim.x) {
        const int pair = stored_pair(slot, pairs);
        if (t == 0) {
            tile[0][0] = 0;
        }
        tile[0][t + 1] = top[pair * NW_LENGTH + t];
        tile[t + 1][0] = left[pair * NW_LENGTH + t];
        for (int y = 0; y < NW_LENGTH; ++y) {
            local_substitution[y][t] = substitution[y * row_pitch + pair * NW_LENGTH + t];
        }
        __syncthreads();

        int y = 0;  // the row above the next cell this thread computes: step - t once started
        for (int step = 0; step < 2 * NW_LENGTH - 1; ++step) {
            if (step >= t && y < NW_LENGTH) {
                const int diagonal = tile[y][t] + local_substitution[y][t];
                const int from_left = tile[y + 1][t] - penalty;
                const int from_above = tile[y][t + 1] - penalty;
                tile[y + 1][t + 1] = max(diagonal, max(from_left, from_above));
                ++y;
            }
            __syncthreads();
        }

        // The next slot's loads write only row 0, column 0 and local_substitution, which these
        // reads do not touch, and its sweep starts after a barrier: no barrier needed here.
        for (int y = 0; y < NW_LENGTH; ++y) {
            scores[y * row_pitch + pair * NW_LENGTH + t] = tile[y + 1][t + 1];
        }
    }
}
