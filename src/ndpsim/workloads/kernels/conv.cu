// CONV: a 3x3 convolution (cross-correlation, as TensorFlow's conv2d computes it) of a
// single-channel float32 image cut into 32 x 32 tiles, each tile filtered on its own with its
// edge pixels repeated outward (MPU's suite, Table I: "3x3 conv"; the tiling, layout and work
// split of the MPU authors' benchmark, GitHub GD06/mpu-sim_distribution, benchmark/conv):
//   out_tile(r, c) = sum over ky, kx in 0..2 of
//                    weights[3 ky + kx] * in_tile(clamp(r + ky - 1), clamp(c + kx - 1))
// where clamp keeps a row or column inside 0..31 of the same tile. A tile never reads a
// neighbouring tile, so the tiles are independent and each can stay in one core's banks.
//
// Layout (the host re-lays the image out, conv.py): a tile is cut into slices of blockDim.y
// rows (blockDim.y x 32 floats, 512 bytes for the suite's 32 x 4 CTA). Slice s of every tile
// comes before slice s + 1 of any tile, and within a slice the tiles are in order:
//   element (r, c) of tile t  is at  (r / blockDim.y) * tiles * slice + t * slice
//                                    + (r % blockDim.y) * 32 + c,    slice = 32 * blockDim.y
// so tile t's slices lie a whole number of slice strides apart: with 512-byte slices and a
// tile count that is a multiple of 128, all of them are in the banks of core t % 128.
//
// Work split: CTA b filters tiles b, b + gridDim.x, b + 2 gridDim.x, ... (a grid-stride loop),
// so with a grid that is a multiple of 128 every tile a CTA touches is in its own core's banks.
// The CTA is 32 threads wide (a tile row) and blockDim.y rows tall (blockDim.y must divide 32):
// thread (tx, ty) loads row ty of every slice into a shared tile, and after a barrier computes
// the outputs of the same rows. The nine weights are read once per CTA into shared memory.
#define TILE 32

extern "C" __global__ void conv3x3(const float* __restrict__ in, const float* __restrict__ weights,
                                   float* __restrict__ out, int tiles)
{
    __shared__ float weight[9];
    __shared__ float tile[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int slice = TILE * blockDim.y;   // floats in one slice of one tile
    int slice_stride = tiles * slice;  // from slice s of a tile to slice s + 1 of the same tile

    if (ty == 0 && tx < 9) {
        weight[tx] = weights[tx];
    }
    __syncthreads();

    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int first = t * slice + ty * TILE + tx;  // this thread's element in the tile's slice 0
        for (int r = ty, at = first; r < TILE; r += blockDim.y, at += slice_stride) {
            tile[r][tx] = in[at];
        }
        __syncthreads();

        for (int r = ty, at = first; r < TILE; r += blockDim.y, at += slice_stride) {
            float sum = 0.0f;
            for (int ky = 0; ky < 3; ++ky) {
                int y = min(max(r + ky - 1, 0), TILE - 1);
                for (int kx = 0; kx < 3; ++kx) {
                    int x = min(max(tx + kx - 1, 0), TILE - 1);
                    sum += tile[y][x] * weight[ky * 3 + kx];
                }
            }
            out[at] = sum;
        }
        __syncthreads();  // the next tile overwrites the shared tile
    }
}
