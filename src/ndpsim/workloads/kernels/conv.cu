// CONV: one 3x3 convolution layer as TensorFlow's tf.nn.conv2d computes it with padding="SAME"
// and stride 1 (MPU's suite, Table I: "3x3 conv", after TensorFlow), batch 1, float32:
//   in      height x width x in_channels               (NHWC, the default data_format)
//   filter  3 x 3 x in_channels x out_channels         (HWIO, TensorFlow's filter layout)
//   out     height x width x out_channels
//   out(y, x, o) = sum over ky, kx in 0..2 and c of in(y + ky - 1, x + kx - 1, c) * filter(ky, kx, c, o)
// where an input pixel outside the image is zero (SAME padding of a 3x3 filter: one pixel on
// every side). One thread per output element, numbered in the output's own order (o fastest):
// with many output channels the threads of a warp share an input value (one broadcast read per
// step) and read consecutive filter values (one coalesced read); with one channel, as in MPU's
// benchmark, they read consecutive pixels and share the filter value. Threads past the end of
// the output do nothing.

extern "C" __global__ void conv3x3(const float* __restrict__ in, const float* __restrict__ filter,
                                   float* __restrict__ out, int height, int width,
                                   int in_channels, int out_channels)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width * out_channels;
    if (i >= total) {
        return;
    }
    int o = i % out_channels;
    int pixel = i / out_channels;
    int x = pixel % width;
    int y = pixel / width;

    float acc = 0.0f;
    for (int ky = 0; ky < 3; ++ky) {
        int iy = y + ky - 1;
        if (iy < 0 || iy >= height) {
            continue;
        }
        for (int kx = 0; kx < 3; ++kx) {
            int ix = x + kx - 1;
            if (ix < 0 || ix >= width) {
                continue;
            }
            const float* px = in + ((size_t)iy * width + ix) * in_channels;
            const float* f = filter + (size_t)(ky * 3 + kx) * in_channels * out_channels + o;
            for (int c = 0; c < in_channels; ++c) {
                acc += px[c] * f[(size_t)c * out_channels];
            }
        }
    }
    out[i] = acc;
}
