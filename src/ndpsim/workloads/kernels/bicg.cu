// BICG: the BiCG sub-kernel of BiCGStab, s = A^T r and q = A p for a dense row-major nx x ny
// matrix A, mirroring PolyBench/GPU's bicg. bicg_atr gives one thread per column j and walks
// down the rows (a warp reads consecutive A[i][j]: coalesced); bicg_ap gives one thread per row
// i and walks along it (a warp's reads of A are ny floats apart). As in PolyBench/GPU both
// accumulate straight into the output array in global memory.
extern "C" __global__ void bicg_atr(const float* A, const float* r, float* s, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ny) {
        s[j] = 0.0f;
#pragma unroll 1
        for (int i = 0; i < nx; i++) {
            s[j] += r[i] * A[(size_t)i * ny + j];
        }
    }
}

extern "C" __global__ void bicg_ap(const float* A, const float* p, float* q, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx) {
        q[i] = 0.0f;
#pragma unroll 1
        for (int j = 0; j < ny; j++) {
            q[i] += A[(size_t)i * ny + j] * p[j];
        }
    }
}
