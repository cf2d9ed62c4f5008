// KM: k-means clustering, as Rodinia's kmeans (CUDA), in its variant that reads the features and
// the cluster centres from global memory instead of texture / constant memory.
//
// km_invert_mapping: once, transposes the point-major features (point p's features contiguous)
// into feature-major order, so that in km_assign the 32 threads of a warp, one point each, read
// 32 consecutive floats of one feature.
//
// km_assign: one thread per point computes the squared Euclidean distance to every centre,
// keeps the nearest (the first on a tie) and writes its membership. The distance is accumulated
// with explicitly rounded multiply and add (no fused multiply-add), feature by feature, so the
// host reference can reproduce every float32 rounding and no membership can flip. The host
// recomputes the centres and iterates.
#include <cfloat>

extern "C" __global__ void km_invert_mapping(const float* __restrict__ points,    // n x f
                                             float* __restrict__ features,        // f x n
                                             int num_points, int num_features)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < num_points) {
        for (int f = 0; f < num_features; f++) {
            features[f * num_points + p] = points[p * num_features + f];
        }
    }
}

extern "C" __global__ void km_assign(const float* __restrict__ features,  // f x n
                                     const float* __restrict__ centres,   // k x f
                                     int* __restrict__ membership,
                                     int num_points, int num_clusters, int num_features)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= num_points) {
        return;
    }
    int nearest = 0;
    float best = FLT_MAX;
    for (int c = 0; c < num_clusters; c++) {
        float dist = 0.0f;
        for (int f = 0; f < num_features; f++) {
            float diff = features[f * num_points + p] - centres[c * num_features + f];
            dist = __fadd_rn(dist, __fmul_rn(diff, diff));
        }
        if (dist < best) {
            best = dist;
            nearest = c;
        }
    }
    membership[p] = nearest;
}
