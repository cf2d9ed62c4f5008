// CFD: explicit finite-volume solver of the 3-D Euler equations on an unstructured grid, as
// Rodinia's cfd (euler3d). Every element has 4 faces; neighbours[j * n + i] is the element across
// face j of element i, or WALL / FAR_FIELD for a boundary face, and normals[(d * 4 + j) * n + i]
// is component d of that face's normal scaled by its area (pointing into the element, as Rodinia
// stores them). All per-element data is variable-major (structure of arrays): variable v of
// element i is at [v * n + i], with v = density, momentum x, y, z, energy.
//
// cfd_step_factor: the local time step of each element from its volume and wave speed.
// cfd_flux: one thread per element accumulates, over its 4 faces, the central convective flux of
// mass, momentum and energy plus an artificial dissipation (loads of the neighbour's variables
// are indirect); wall faces contribute pressure only, far-field faces use the free stream.
// cfd_time_step: one Runge-Kutta stage, variables = old + step / (RK + 1 - stage) * flux.
#define NNB 4
#define NVAR 5
#define VAR_DENSITY 0
#define VAR_MOMENTUM 1
#define VAR_ENERGY 4
#define RK 3
#define WALL (-1)
#define FAR_FIELD (-2)
#define GAMMA 1.4f
#define SMOOTHING 0.2f

// far_field[] holds the free stream's momentum (3) and then its flux contributions: the
// momentum-x, -y, -z and energy fluxes, 3 components each.
#define FF_MOMENTUM 0
#define FF_FLUX_MX 3
#define FF_FLUX_MY 6
#define FF_FLUX_MZ 9
#define FF_FLUX_E 12

__device__ __forceinline__ float pressure_of(float density, float energy, float speed_sqd)
{
    return (GAMMA - 1.0f) * (energy - 0.5f * density * speed_sqd);
}

__device__ __forceinline__ float sound_speed_of(float density, float pressure)
{
    return sqrtf(GAMMA * pressure / density);
}

extern "C" __global__ void cfd_step_factor(const float* __restrict__ variables,
                                           const float* __restrict__ volumes,
                                           float* __restrict__ step_factors, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float density = variables[VAR_DENSITY * n + i];
    float vx = variables[(VAR_MOMENTUM + 0) * n + i] / density;
    float vy = variables[(VAR_MOMENTUM + 1) * n + i] / density;
    float vz = variables[(VAR_MOMENTUM + 2) * n + i] / density;
    float energy = variables[VAR_ENERGY * n + i];
    float speed_sqd = vx * vx + vy * vy + vz * vz;
    float sound = sound_speed_of(density, pressure_of(density, energy, speed_sqd));
    step_factors[i] = 0.5f / (sqrtf(volumes[i]) * (sqrtf(speed_sqd) + sound));
}

extern "C" __global__ void cfd_flux(const int* __restrict__ neighbours,
                                    const float* __restrict__ normals,
                                    const float* __restrict__ variables,
                                    const float* __restrict__ far_field,
                                    float* __restrict__ fluxes, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    // This element's state and its flux contributions.
    float rho = variables[VAR_DENSITY * n + i];
    float mx = variables[(VAR_MOMENTUM + 0) * n + i];
    float my = variables[(VAR_MOMENTUM + 1) * n + i];
    float mz = variables[(VAR_MOMENTUM + 2) * n + i];
    float e = variables[VAR_ENERGY * n + i];
    float vx = mx / rho, vy = my / rho, vz = mz / rho;
    float speed_sqd = vx * vx + vy * vy + vz * vz;
    float p = pressure_of(rho, e, speed_sqd);
    float speed = sqrtf(speed_sqd);
    float sound = sound_speed_of(rho, p);
    float e_p = e + p;

    float flux_rho = 0.0f, flux_mx = 0.0f, flux_my = 0.0f, flux_mz = 0.0f, flux_e = 0.0f;

    for (int j = 0; j < NNB; j++) {
        int nb = neighbours[j * n + i];
        float nx = normals[(0 * NNB + j) * n + i];
        float ny = normals[(1 * NNB + j) * n + i];
        float nz = normals[(2 * NNB + j) * n + i];
        if (nb >= 0) {
            float rho_b = variables[VAR_DENSITY * n + nb];
            float mx_b = variables[(VAR_MOMENTUM + 0) * n + nb];
            float my_b = variables[(VAR_MOMENTUM + 1) * n + nb];
            float mz_b = variables[(VAR_MOMENTUM + 2) * n + nb];
            float e_b = variables[VAR_ENERGY * n + nb];
            float vx_b = mx_b / rho_b, vy_b = my_b / rho_b, vz_b = mz_b / rho_b;
            float speed_sqd_b = vx_b * vx_b + vy_b * vy_b + vz_b * vz_b;
            float p_b = pressure_of(rho_b, e_b, speed_sqd_b);
            float sound_b = sound_speed_of(rho_b, p_b);
            float e_p_b = e_b + p_b;

            // artificial dissipation, proportional to the jump across the face
            float area = sqrtf(nx * nx + ny * ny + nz * nz);
            float factor = -area * SMOOTHING * 0.5f * (speed + sqrtf(speed_sqd_b) + sound + sound_b);
            flux_rho += factor * (rho - rho_b);
            flux_mx += factor * (mx - mx_b);
            flux_my += factor * (my - my_b);
            flux_mz += factor * (mz - mz_b);
            flux_e += factor * (e - e_b);

            // central flux: the mean of both sides' fluxes through the face
            float hx = 0.5f * nx, hy = 0.5f * ny, hz = 0.5f * nz;
            flux_rho += hx * (mx_b + mx) + hy * (my_b + my) + hz * (mz_b + mz);
            flux_mx += hx * (mx_b * vx_b + p_b + mx * vx + p) + hy * (mx_b * vy_b + mx * vy) +
                       hz * (mx_b * vz_b + mx * vz);
            flux_my += hx * (my_b * vx_b + my * vx) + hy * (my_b * vy_b + p_b + my * vy + p) +
                       hz * (my_b * vz_b + my * vz);
            flux_mz += hx * (mz_b * vx_b + mz * vx) + hy * (mz_b * vy_b + mz * vy) +
                       hz * (mz_b * vz_b + p_b + mz * vz + p);
            flux_e += hx * (vx_b * e_p_b + vx * e_p) + hy * (vy_b * e_p_b + vy * e_p) +
                      hz * (vz_b * e_p_b + vz * e_p);
        } else if (nb == WALL) {
            // a solid wall: only the pressure pushes on the momentum
            flux_mx += nx * p;
            flux_my += ny * p;
            flux_mz += nz * p;
        } else if (nb == FAR_FIELD) {
            float hx = 0.5f * nx, hy = 0.5f * ny, hz = 0.5f * nz;
            const float* ff = far_field;
            flux_rho += hx * (ff[FF_MOMENTUM + 0] + mx) + hy * (ff[FF_MOMENTUM + 1] + my) +
                        hz * (ff[FF_MOMENTUM + 2] + mz);
            flux_mx += hx * (ff[FF_FLUX_MX + 0] + mx * vx + p) + hy * (ff[FF_FLUX_MX + 1] + mx * vy) +
                       hz * (ff[FF_FLUX_MX + 2] + mx * vz);
            flux_my += hx * (ff[FF_FLUX_MY + 0] + my * vx) + hy * (ff[FF_FLUX_MY + 1] + my * vy + p) +
                       hz * (ff[FF_FLUX_MY + 2] + my * vz);
            flux_mz += hx * (ff[FF_FLUX_MZ + 0] + mz * vx) + hy * (ff[FF_FLUX_MZ + 1] + mz * vy) +
                       hz * (ff[FF_FLUX_MZ + 2] + mz * vz + p);
            flux_e += hx * (ff[FF_FLUX_E + 0] + vx * e_p) + hy * (ff[FF_FLUX_E + 1] + vy * e_p) +
                      hz * (ff[FF_FLUX_E + 2] + vz * e_p);
        }
    }
    fluxes[VAR_DENSITY * n + i] = flux_rho;
    fluxes[(VAR_MOMENTUM + 0) * n + i] = flux_mx;
    fluxes[(VAR_MOMENTUM + 1) * n + i] = flux_my;
    fluxes[(VAR_MOMENTUM + 2) * n + i] = flux_mz;
    fluxes[VAR_ENERGY * n + i] = flux_e;
}

extern "C" __global__ void cfd_time_step(int stage, const float* __restrict__ old_variables,
                                         float* __restrict__ variables,
                                         const float* __restrict__ step_factors,
                                         const float* __restrict__ fluxes, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float factor = step_factors[i] / (float)(RK + 1 - stage);
    for (int v = 0; v < NVAR; v++) {
        variables[v * n + i] = old_variables[v * n + i] + factor * fluxes[v * n + i];
    }
}
