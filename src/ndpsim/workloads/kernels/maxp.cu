// MAXP: 2x2 max-pooling with stride 2 as TensorFlow's tf.nn.max_pool computes it with
// padding="VALID" (MPU's suite, Table I: "Max-pooling", after TensorFlow), batch 1, float32:
//   in   height x width x channels                      (NHWC)
//   out  (height / 2) x (width / 2) x channels          (integer division: VALID drops an odd
//                                                        last row or column)
//   out(y, x, c) = max of in(2y + dy, 2x + dx, c) for dy, dx in {0, 1}
// One thread per output element, numbered in the output's order (c fastest), so that a warp
// reads consecutive channels of each of its four input pixels (coalesced). Threads past the
// end of the output do nothing.

extern "C" __global__ void maxpool2x2(const float* __restrict__ in, float* __restrict__ out,
                                      int height, int width, int channels)
{
    int out_height = height / 2;
    int out_width = width / 2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= out_height * out_width * channels) {
        return;
    }
    int c = i % channels;
    int pixel = i / channels;
    int x = pixel % out_width;
    int y = pixel / out_width;

    size_t row_stride = (size_t)width * channels;
    const float* top = in + (size_t)(2 * y) * row_stride + (size_t)(2 * x) * channels + c;
    const float* bottom = top + row_stride;
    float m = fmaxf(fmaxf(top[0], top[channels]), fmaxf(bottom[0], bottom[channels]));
    out[i] = m;
}
