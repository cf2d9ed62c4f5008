// KMEANS: one k-means assignment pass, the layout and work distribution of the MPU authors'
// benchmark (GitHub GD06/mpu-sim_distribution, benchmark/kmeans): 4 clusters of 4 float32
// features, both fixed at compile time as there.
//
// The points are stored feature-major: feature f of point p at points[f * num_points + p], so a
// warp's loads of one feature are 32 consecutive floats. The centroids are feature-major too
// (feature f of centroid c at centroids[f * KMEANS_CLUSTERS + c]); every CTA copies them into
// shared memory before its points. A fixed grid walks the points grid-stride: thread t of CTA b
// takes points b * blockDim.x + t, then that plus gridDim.x * blockDim.x, ... For each point it
// computes the squared Euclidean distance to every centroid (features summed in order 0..3) and
// writes the index of the nearest one to membership. Ties: the strict < keeps the lowest index
// among equally near centroids.
#define KMEANS_CLUSTERS 4
#define KMEANS_FEATURES 4

extern "C" __global__ void kmeans_assign(const float* __restrict__ points,
                                         const float* __restrict__ centroids,
                                         int* __restrict__ membership, int num_points)
{
    __shared__ float staged[KMEANS_FEATURES * KMEANS_CLUSTERS];
    for (int i = threadIdx.x; i < KMEANS_FEATURES * KMEANS_CLUSTERS; i += blockDim.x) {
        staged[i] = centroids[i];
    }
    __syncthreads();

    const int stride = gridDim.x * blockDim.x;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < num_points; p += stride) {
        float feature[KMEANS_FEATURES];
#pragma unroll
        for (int f = 0; f < KMEANS_FEATURES; ++f) {
            feature[f] = points[f * num_points + p];
        }
        int nearest = 0;
        float nearest_distance = 0.0f;
#pragma unroll
        for (int c = 0; c < KMEANS_CLUSTERS; ++c) {
            float distance = 0.0f;
#pragma unroll
            for (int f = 0; f < KMEANS_FEATURES; ++f) {
                const float difference = feature[f] - staged[f * KMEANS_CLUSTERS + c];
                distance += difference * difference;
            }
            if (c == 0 || distance < nearest_distance) {
                nearest_distance = distance;
                nearest = c;
            }
        }
        membership[p] = nearest;
    }
}
