// MAXP: 2x2 max-pooling with stride 2 (TensorFlow's tf.nn.max_pool, VALID padding), batch 1,
// float32, NHWC, with the input stored in four planes so that each CTA reads the windows of the
// outputs it writes from its own core's banks (MPU's suite, Table I: "Max-pooling"; the work
// distribution and the layout are those of the MPU authors' benchmark, GitHub
// GD06/mpu-sim_distribution, benchmark/maxpool).
//
// Output: out_height x out_width x channels, row-major (channel fastest), count floats, where
// out_width * channels is a multiple of B = blockDim.x and B a multiple of channels. It is
// written in chunks of B consecutive floats (a chunk is part of one output row and starts on a
// pixel): CTA b writes chunks b, b + gridDim.x, ... (a grid-stride loop).
// Input: the 2 out_height x 2 out_width x channels pixels the windows cover, as four planes of
// count floats. Output chunk c (output row r) reads the 2 B input floats at the same columns of
// each of the input rows 2r and 2r + 1; their first and second halves of B floats are stored at
// position c * B of
//   plane 0: row 2r, first half     plane 1: row 2r, second half
//   plane 2: row 2r + 1, first half plane 3: row 2r + 1, second half
// so input chunk c of every plane has the same offset within its plane as output chunk c, and
// lies in the same core's banks under MPU's near-bank mapping when count is a multiple of
// 128 B. The CTA stages the two input rows' 2 B floats in shared memory; thread t (channel
// k = t mod channels, so its output pixel's left input pixel starts at 2 t - k in the staged row)
// writes the largest of the four:
//   out = max(top[2t - k], top[2t - k + channels], bottom[2t - k], bottom[2t - k + channels])

extern "C" __global__ void maxpool2x2_planes(const float* __restrict__ in,
                                             float* __restrict__ out, int count, int channels)
{
    extern __shared__ float rows[];  // 2 input rows x 2 blockDim.x floats
    const int t = threadIdx.x;
    const int chunk_floats = blockDim.x;
    const float* top = rows;
    const float* bottom = rows + 2 * chunk_floats;
    const int left = 2 * t - t % channels;
    const int right = left + channels;

    for (int first = blockIdx.x * chunk_floats; first < count; first += gridDim.x * chunk_floats) {
        for (int row = 0; row < 2; ++row) {
            for (int half = 0; half < 2; ++half) {
                size_t plane = (size_t)(2 * row + half) * count;
                rows[(2 * row + half) * chunk_floats + t] = in[plane + first + t];
            }
        }
        __syncthreads();
        float m = fmaxf(fmaxf(top[left], top[right]), fmaxf(bottom[left], bottom[right]));
        __syncthreads();
        out[first + t] = m;
    }
}
