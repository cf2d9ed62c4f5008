// KNN: the distance kernel of k nearest neighbours (MPU's suite, Table I, after Rodinia's nn):
// the Euclidean distance of every record's (latitude, longitude) to the target point. The host
// picks the k nearest from the distances, as Rodinia does.
//
// Layout and work split of the MPU authors' benchmark (GitHub GD06/mpu-sim_distribution,
// benchmark/knn): latitudes and longitudes in two arrays of their own (not Rodinia's array of
// pairs), and a fixed grid whose threads stride over the records, so that CTA b handles the
// chunks b, b + gridDim.x, ... of blockDim.x consecutive records. With 128 threads a chunk of
// each array is 512 bytes, one core's interleave unit on MPU, and with a grid that is a
// multiple of 128 every chunk a CTA touches is in its own core's banks.
//
// The products and their sum are rounded one by one (__fmul_rn, __fadd_rn keep nvcc from
// contracting them into an fma) so that NumPy's float32 arithmetic reproduces every bit.
extern "C" __global__ void knn_distances(const float* __restrict__ lats,
                                         const float* __restrict__ lngs,
                                         float* __restrict__ distances, int n,
                                         float lat, float lng)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float dlat = lat - lats[i];
        float dlng = lng - lngs[i];
        distances[i] = sqrtf(__fadd_rn(__fmul_rn(dlat, dlat), __fmul_rn(dlng, dlng)));
    }
}
