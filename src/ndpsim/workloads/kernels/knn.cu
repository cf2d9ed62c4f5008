// KNN: the distance kernel of Rodinia's nn (k nearest neighbours; MPU suite). Each record is a
// (latitude, longitude) pair of floats; one thread per record computes its Euclidean distance
// to the target point. The host picks the k nearest from the distances, as Rodinia does.
// The products and their sum are rounded one by one (__fmul_rn, __fadd_rn keep nvcc from
// contracting them into an fma) so that NumPy's float32 arithmetic reproduces every bit.
struct LatLong {
    float lat;
    float lng;
};

extern "C" __global__ void knn_distances(const LatLong* __restrict__ records,
                                         float* __restrict__ distances, int n,
                                         float lat, float lng)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float dlat = lat - records[i].lat;
        float dlng = lng - records[i].lng;
        distances[i] = sqrtf(__fadd_rn(__fmul_rn(dlat, dlat), __fmul_rn(dlng, dlng)));
    }
}
