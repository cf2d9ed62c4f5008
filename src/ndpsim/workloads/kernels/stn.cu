// STN: one Jacobi step of a 3D 7-point stencil, mirroring Parboil's stencil. The grid is
// nx * ny * nz floats, x fastest. Each thread owns an interior (x, y) column and walks z over the
// interior planes, reading the point and its 6 neighbours from `in` and writing
// out = c0 * centre + c1 * (sum of the 6 neighbours). Boundary points are not written, so they
// keep the values both buffers start with; the host swaps the buffers between time steps.
extern "C" __global__ void stencil7(const float* __restrict__ in, float* __restrict__ out,
                                    int nx, int ny, int nz, float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (x < nx - 1 && y < ny - 1) {
        int plane = nx * ny;
#pragma unroll 1
        for (int z = 1; z < nz - 1; z++) {
            int at = x + nx * y + plane * z;
            float neighbours = in[at - 1] + in[at + 1] + in[at - nx] + in[at + nx]
                             + in[at - plane] + in[at + plane];
            out[at] = c0 * in[at] + c1 * neighbours;
        }
    }
}
