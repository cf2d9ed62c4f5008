// UPSAMP: 2x nearest-neighbour upsampling of a float32 image, the output stored in four planes
// so that each CTA writes next to what it reads (MPU's suite, Table I: "Image upsample"; the
// work distribution and the layout are those of the MPU authors' benchmark, GitHub
// GD06/mpu-sim_distribution, benchmark/upsample).
//
// Input: the width x height image, row-major, count = width * height floats, width a multiple
// of blockDim.x. It is read in chunks of blockDim.x consecutive floats (a chunk is part of one
// row): CTA b takes chunks b, b + gridDim.x, ... (a grid-stride loop) and stages each in shared
// memory. Output: out(Y, X) = in(Y / 2, X / 2), 2 width x 2 height pixels, stored as four
// planes of count floats. Input chunk c (row r, columns c0 .. c0 + B - 1, B = blockDim.x)
// becomes 2 B output pixels in each of the output rows 2r and 2r + 1, whose first and second
// halves of B pixels are stored at position c * B of
//   plane 0: row 2r, first half     plane 1: row 2r, second half
//   plane 2: row 2r + 1, first half plane 3: row 2r + 1, second half
// so output chunk c of every plane has the same offset within its plane as input chunk c, and
// lies in the same core's banks under MPU's near-bank mapping when count is a multiple of
// 128 B. Thread t writes element t of each: chunk[(half * B + t) / 2].

extern "C" __global__ void upsample2x_planes(const float* __restrict__ in,
                                             float* __restrict__ out, int count)
{
    extern __shared__ float chunk[];  // blockDim.x floats
    const int t = threadIdx.x;
    const int chunk_floats = blockDim.x;

    for (int first = blockIdx.x * chunk_floats; first < count; first += gridDim.x * chunk_floats) {
        chunk[t] = in[first + t];
        __syncthreads();
        for (int row = 0; row < 2; ++row) {
            for (int half = 0; half < 2; ++half) {
                size_t plane = (size_t)(2 * row + half) * count;
                out[plane + first + t] = chunk[(half * chunk_floats + t) / 2];
            }
        }
        __syncthreads();
    }
}
