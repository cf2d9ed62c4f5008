// BLUR: 3x3 box blur of a float32 image stored as square tiles, each tile blurred on its own
// (MPU's suite, Table I: "3x3 blur"; the tiling and the layout are those of the MPU authors'
// benchmark, GitHub GD06/mpu-sim_distribution, benchmark/blur).
//
// Layout. A CTA is side x rows threads (side = blockDim.x, rows = blockDim.y, side a multiple of
// rows). The image is cut into square tiles of side x side pixels, numbered 0 .. tiles - 1, and
// each tile into side / rows slices of rows x side pixels (a slice is side * rows consecutive
// floats, row-major). Slice s of tile t is stored at
//   ((s * tiles) + t) * (side * rows)
// that is, slice-major: all tiles' slice 0, then all tiles' slice 1, ... With 32 x 4 threads a
// slice is 512 bytes, one core's interleave unit under MPU's near-bank mapping, and when the
// tile count and the grid are multiples of 128 every slice of the tiles a CTA handles lies in
// the banks of the core that runs it.
//
// Work. CTA b blurs tiles b, b + gridDim.x, b + 2 gridDim.x, ...: it copies a tile's slices into
// shared memory, then each thread writes the blurred pixels of its column, one per slice:
//   out(y, x) = (sum over dy, dx in {-1, 0, 1} of tile(clamp(y + dy), clamp(x + dx))) * (1 / 9)
// with clamp() to [0, side - 1] INSIDE THE TILE: a pixel on a tile's edge repeats that edge
// instead of reading the neighbouring tile, as the authors' kernel does. The sum starts with the
// top-left tap and adds row by row, left to right, in float32; the reference repeats that order.

extern "C" __global__ void blur3x3_tiles(const float* __restrict__ in, float* __restrict__ out,
                                         int tiles)
{
    extern __shared__ float tile[];  // side x side floats, row-major
    const int side = blockDim.x;
    const int rows = blockDim.y;
    const int slice_floats = side * rows;
    const int x = threadIdx.x;
    const float ninth = 1.0f / 9.0f;

    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        for (int y0 = 0; y0 < side; y0 += rows) {
            size_t slice = (size_t)(y0 / rows) * tiles + t;
            tile[(y0 + threadIdx.y) * side + x] =
                in[slice * slice_floats + threadIdx.y * side + x];
        }
        __syncthreads();

        int left = max(x - 1, 0);
        int right = min(x + 1, side - 1);
        for (int y0 = 0; y0 < side; y0 += rows) {
            int y = y0 + threadIdx.y;
            const float* above = tile + max(y - 1, 0) * side;
            const float* centre = tile + y * side;
            const float* below = tile + min(y + 1, side - 1) * side;
            float sum = above[left];
            sum += above[x];
            sum += above[right];
            sum += centre[left];
            sum += centre[x];
            sum += centre[right];
            sum += below[left];
            sum += below[x];
            sum += below[right];
            size_t slice = (size_t)(y0 / rows) * tiles + t;
            out[slice * slice_floats + threadIdx.y * side + x] = sum * ninth;
        }
        __syncthreads();
    }
}
