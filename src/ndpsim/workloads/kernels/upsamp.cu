// UPSAMP: 2x upsampling of a width x height float32 image (row-major) by bilinear
// interpolation, as Halide's tutorial-style upsample computes it (MPU's suite, Table I: "Image
// upsample", after Halide). The output is 2 width x 2 height; output pixel (x, y) samples the
// input at the point
//   sx = (x + 0.5) / 2 - 0.5,   sy = (y + 0.5) / 2 - 0.5
// (pixel centres aligned), between the input pixels x0 = floor(sx) and x0 + 1 (y0 = floor(sy)
// and y0 + 1) with weights wx = sx - x0 and wy = sy - y0:
//   top    = in(x0, y0)     + wx * (in(x0 + 1, y0)     - in(x0, y0))
//   bottom = in(x0, y0 + 1) + wx * (in(x0 + 1, y0 + 1) - in(x0, y0 + 1))
//   out(x, y) = top + wy * (bottom - top)
// An index outside the input is clamped to the edge. Each thread of a 2D grid of 2D CTAs
// writes one output pixel; threads outside the output do nothing.

__device__ __forceinline__ int clamp_index(int i, int last)
{
    return min(max(i, 0), last);
}

extern "C" __global__ void upsample2x(const float* __restrict__ in, float* __restrict__ out,
                                      int width, int height)
{
    int out_width = 2 * width;
    int out_height = 2 * height;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_width || y >= out_height) {
        return;
    }
    float sx = (x + 0.5f) * 0.5f - 0.5f;
    float sy = (y + 0.5f) * 0.5f - 0.5f;
    float fx = floorf(sx);
    float fy = floorf(sy);
    float wx = sx - fx;
    float wy = sy - fy;
    int x0 = (int)fx;
    int y0 = (int)fy;
    int xa = clamp_index(x0, width - 1);
    int xb = clamp_index(x0 + 1, width - 1);
    const float* row_a = in + (size_t)clamp_index(y0, height - 1) * width;
    const float* row_b = in + (size_t)clamp_index(y0 + 1, height - 1) * width;

    float a = row_a[xa];
    float top = a + wx * (row_a[xb] - a);
    float b = row_b[xa];
    float bottom = b + wx * (row_b[xb] - b);
    out[(size_t)y * out_width + x] = top + wy * (bottom - top);
}
