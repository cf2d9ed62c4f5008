// TTRANS: transposition of 32 x 32 float32 tiles through shared memory (MPU's suite, Table I:
// cuBLAS tensor transposition), with the tiling, layout and work split of the MPU authors'
// benchmark (GitHub GD06/mpu-sim_distribution, benchmark/matrixtrans). Output tile t is input
// tile t transposed: out_tile(r, c) = in_tile(c, r). The host numbers the tiles so that this is
// the transpose of the whole matrix (ttrans.py): input tile (i, j) and output tile (j, i) are
// both tile t, so a tile never leaves the core that holds it.
//
// Layout of both arrays: a tile is cut into slices of blockDim.y rows (blockDim.y x 32 floats,
// 512 bytes for the suite's 32 x 4 CTA). Slice s of every tile comes before slice s + 1 of any
// tile, and within a slice the tiles are in order:
//   element (r, c) of tile t  is at  (r / blockDim.y) * tiles * slice + t * slice
//                                    + (r % blockDim.y) * 32 + c,    slice = 32 * blockDim.y
// so tile t's slices lie a whole number of slice strides apart: with 512-byte slices and a tile
// count that is a multiple of 128, all of them are in the banks of core t % 128.
//
// Work split: CTA b transposes tiles b, b + gridDim.x, b + 2 gridDim.x, ... (a grid-stride
// loop), so with a grid that is a multiple of 128 every tile a CTA touches is in its own core's
// banks. The CTA is 32 threads wide and blockDim.y rows tall (blockDim.y must divide 32): thread
// (tx, ty) loads row ty of every slice into tile[r][tx] (one coalesced 128-byte read per warp),
// and after a barrier stores tile[tx][r] to the same place of the output (one coalesced write).
// The shared tile is padded to 33 columns: reading a column of it then touches 32 different
// shared-memory banks instead of one.
#define TILE 32

extern "C" __global__ void ttrans(const float* __restrict__ in, float* __restrict__ out,
                                  int tiles)
{
    __shared__ float tile[TILE][TILE + 1];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int slice = TILE * blockDim.y;   // floats in one slice of one tile
    int slice_stride = tiles * slice;  // from slice s of a tile to slice s + 1 of the same tile

    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int first = t * slice + ty * TILE + tx;  // this thread's element in the tile's slice 0
        for (int r = ty, at = first; r < TILE; r += blockDim.y, at += slice_stride) {
            tile[r][tx] = in[at];
        }
        __syncthreads();

        for (int r = ty, at = first; r < TILE; r += blockDim.y, at += slice_stride) {
            out[at] = tile[tx][r];
        }
        __syncthreads();  // the next tile overwrites the shared tile
    }
}
