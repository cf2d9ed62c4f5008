// FWT: fast Walsh-Hadamard transform used for dyadic convolution, the computation and access
// pattern of the CUDA SDK's fastWalshTransform sample. A transform of 2^k floats is a sequence of
// radix-2 butterfly stages (x, y) -> (x + y, x - y) on elements `stride` apart; the stages commute.
// fwt_global_stage does one stage with a large stride over the whole array (the host launches it
// in a loop, halving the stride); fwt_shared_stages then loads tiles of 2 * blockDim.x elements
// into shared memory and does every stage with a stride below the tile size there. The
// convolution transforms the data and the zero-padded kernel, multiplies them element-wise
// (modulate, which also applies the 1/N of the inverse transform) and transforms the product.

// One butterfly stage: thread t handles the pair (lo, lo + stride) with lo having bit `stride`
// clear; stride is a power of two and the array has 2 * num_pairs elements.
extern "C" __global__ void fwt_global_stage(float* __restrict__ data, int stride, int num_pairs)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < num_pairs) {
        int lo = ((t & ~(stride - 1)) << 1) | (t & (stride - 1));
        float x = data[lo];
        float y = data[lo + stride];
        data[lo] = x + y;
        data[lo + stride] = x - y;
    }
}

// All stages with strides blockDim.x, blockDim.x / 2, ..., 1 on tiles of 2 * blockDim.x
// elements, one tile per CTA; blockDim.x must be a power of two, at most 256.
extern "C" __global__ void fwt_shared_stages(float* __restrict__ data)
{
    __shared__ float tile[512];
    const int tid = threadIdx.x;
    const int half = blockDim.x;
    float* base = data + (size_t)blockIdx.x * 2 * half;
    tile[tid] = base[tid];
    tile[tid + half] = base[tid + half];
    for (int stride = half; stride > 0; stride >>= 1) {
        __syncthreads();
        int lo = ((tid & ~(stride - 1)) << 1) | (tid & (stride - 1));
        float x = tile[lo];
        float y = tile[lo + stride];
        tile[lo] = x + y;
        tile[lo + stride] = x - y;
    }
    __syncthreads();
    base[tid] = tile[tid];
    base[tid + half] = tile[tid + half];
}

// data[i] *= kernel[i] * scale: the pointwise product of the two spectra, scale = 1 / N.
extern "C" __global__ void fwt_modulate(float* __restrict__ data, const float* __restrict__ kernel,
                                        float scale, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        data[i] *= kernel[i] * scale;
    }
}
