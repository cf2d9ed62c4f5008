// BLUR: Halide's classic 3x3 box blur of a width x height float32 image (row-major), as two
// separable passes, each a kernel of its own (MPU's suite, Table I: "3x3 blur", after Halide):
//   blur_x: tmp(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3
//   blur_y: out(x, y) = (tmp(x, y - 1) + tmp(x, y) + tmp(x, y + 1)) / 3
// The border is clamped to the edge (Halide's BoundaryConditions::repeat_edge): a neighbour
// outside the image is the nearest pixel inside it. Each thread of a 2D grid of 2D CTAs writes
// one output pixel; threads outside the image do nothing. The sum is taken left to right (top to
// bottom) and divided by 3 with IEEE division, as the NumPy reference does.

__device__ __forceinline__ int clamp_index(int i, int last)
{
    return min(max(i, 0), last);
}

extern "C" __global__ void blur_x(const float* __restrict__ in, float* __restrict__ tmp,
                                  int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const float* row = in + (size_t)y * width;
    float left = row[clamp_index(x - 1, width - 1)];
    float centre = row[x];
    float right = row[clamp_index(x + 1, width - 1)];
    tmp[(size_t)y * width + x] = (left + centre + right) / 3.0f;
}

extern "C" __global__ void blur_y(const float* __restrict__ tmp, float* __restrict__ out,
                                  int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float above = tmp[(size_t)clamp_index(y - 1, height - 1) * width + x];
    float centre = tmp[(size_t)y * width + x];
    float below = tmp[(size_t)clamp_index(y + 1, height - 1) * width + x];
    out[(size_t)y * width + x] = (above + centre + below) / 3.0f;
}
