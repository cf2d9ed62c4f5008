// HW: heart-wall-like tracking of sample points through a sequence of grey-level frames, with the
// access pattern of Rodinia's heartwall (TOM suite). hw_templates cuts a square template around
// every point of the first frame and normalizes it to zero mean and unit norm. Then, once per
// frame, hw_track runs one CTA per point: each thread scores candidate displacements inside the
// search window by normalized cross-correlation (nested loops over the template rows and columns,
// reading the frame from global memory), a shared-memory argmax reduction picks the best one, and
// the point moves there. The float arithmetic uses the _rn intrinsics so that nvcc does not fuse
// multiply-adds: every score is then a fixed sequence of IEEE float32 operations.
#include <float.h>

#define HW_MAX_TEMPLATE 1024  // template pixels: radius up to 15
#define HW_MAX_THREADS 512    // blockDim.x: a power of two, at most this

// Sum of v over the CTA by a tree in shared memory (blockDim.x a power of two); all threads get it.
__device__ __forceinline__ float hw_block_sum(float* buf, float v)
{
    unsigned int tid = threadIdx.x;
    buf[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            buf[tid] = __fadd_rn(buf[tid], buf[tid + s]);
        }
        __syncthreads();
    }
    float total = buf[0];
    __syncthreads();
    return total;
}

// One CTA per point; needs blockDim.x >= (2 * radius + 1)^2.
extern "C" __global__ void hw_templates(const float* __restrict__ frame0, int width,
                                        const int* __restrict__ points, int radius,
                                        float* __restrict__ templates)
{
    __shared__ float buf[HW_MAX_THREADS];
    int k = blockIdx.x;
    int tid = threadIdx.x;
    int side = 2 * radius + 1;
    int n = side * side;
    int y = points[2 * k];
    int x = points[2 * k + 1];
    float v = 0.0f;
    if (tid < n) {
        v = frame0[(y - radius + tid / side) * width + (x - radius + tid % side)];
    }
    float mean = __fdiv_rn(hw_block_sum(buf, v), (float)n);
    float d = tid < n ? __fsub_rn(v, mean) : 0.0f;
    float norm = __fsqrt_rn(hw_block_sum(buf, __fmul_rn(d, d)));
    if (tid < n) {
        templates[k * n + tid] = __fdiv_rn(d, norm);
    }
}

// One CTA per point: moves the point from prev[k] to next[k] (y, x pairs) within +-search pixels,
// clamped so that template and search window stay inside the frame.
extern "C" __global__ void hw_track(const float* __restrict__ frame, int width, int height,
                                    const float* __restrict__ templates, int radius, int search,
                                    const int* __restrict__ prev, int* __restrict__ next,
                                    float* __restrict__ best_score)
{
    __shared__ float tmpl[HW_MAX_TEMPLATE];
    __shared__ float s_score[HW_MAX_THREADS];
    __shared__ int s_index[HW_MAX_THREADS];
    int k = blockIdx.x;
    int tid = threadIdx.x;
    int side = 2 * radius + 1;
    int n = side * side;
    for (int i = tid; i < n; i += blockDim.x) {
        tmpl[i] = templates[k * n + i];
    }
    __syncthreads();

    int y = prev[2 * k];
    int x = prev[2 * k + 1];
    int wide = 2 * search + 1;
    int candidates = wide * wide;
    float best = -INFINITY;
    int best_index = candidates;
    for (int c = tid; c < candidates; c += blockDim.x) {
        int top = y + c / wide - search - radius;
        int left = x + c % wide - search - radius;
        float sf = 0.0f, sff = 0.0f, sft = 0.0f;
        for (int r = 0; r < side; r++) {
            const float* row = frame + (top + r) * width + left;
            const float* trow = tmpl + r * side;
            for (int col = 0; col < side; col++) {
                float f = row[col];
                sf = __fadd_rn(sf, f);
                sff = __fadd_rn(sff, __fmul_rn(f, f));
                sft = __fadd_rn(sft, __fmul_rn(f, trow[col]));
            }
        }
        float var = __fsub_rn(sff, __fdiv_rn(__fmul_rn(sf, sf), (float)n));
        float score = var > 0.0f ? __fdiv_rn(sft, __fsqrt_rn(var)) : -FLT_MAX;
        if (score > best) {  // candidates rise per thread: ties keep the first
            best = score;
            best_index = c;
        }
    }

    s_score[tid] = best;
    s_index[tid] = best_index;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            float other = s_score[tid + s];
            int other_index = s_index[tid + s];
            if (other > s_score[tid] || (other == s_score[tid] && other_index < s_index[tid])) {
                s_score[tid] = other;
                s_index[tid] = other_index;
            }
        }
        __syncthreads();
    }
    if (tid == 0) {
        int c = s_index[0];
        int margin = radius + search;
        int ny = min(max(y + c / wide - search, margin), height - 1 - margin);
        int nx = min(max(x + c % wide - search, margin), width - 1 - margin);
        next[2 * k] = ny;
        next[2 * k + 1] = nx;
        best_score[k] = s_score[0];
    }
}
