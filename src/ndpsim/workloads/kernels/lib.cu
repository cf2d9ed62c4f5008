// LIB: LIBOR market model Monte Carlo with adjoint sensitivities, one thread per path, mirroring
// the LIBOR benchmark shipped with GPGPU-Sim (after Mike Giles' code).
//
// Each thread evolves the forward rates L[0..N) of its path over Nmat time steps driven by the
// normal numbers z[0..Nmat), then prices a portfolio of Nopt receiver swaptions and computes the
// sensitivities L_b[n] = dv/dL[n] of the discounted portfolio value v by a backward (adjoint)
// sweep. Every per-path array lives in global memory laid out [n * num_paths + path], so the
// accesses of a warp to the same n coalesce (as the original's per-thread local arrays do).
// Loops carry "#pragma unroll 1" so each stays a single loop in the PTX.

__device__ __forceinline__ void path_calc(const float* __restrict__ z,
                                          const float* __restrict__ lambda,
                                          float* __restrict__ L,
                                          int N, int Nmat, float delta, int P, int path)
{
    float sqrt_delta = sqrtf(delta);
#pragma unroll 1
    for (int n = 0; n < Nmat; n++) {
        float sqez = sqrt_delta * z[n * P + path];
        float drift = 0.0f;
#pragma unroll 1
        for (int i = n + 1; i < N; i++) {
            float lam = lambda[i - n - 1];
            float con1 = delta * lam;
            float Li = L[i * P + path];
            drift += con1 * Li / (1.0f + delta * Li);
            float vrat = expf(con1 * drift + lam * (sqez - 0.5f * con1));
            L[i * P + path] = Li * vrat;
        }
    }
}

__device__ __forceinline__ float portfolio_b(const int* __restrict__ maturities,
                                             const float* __restrict__ swaprates,
                                             const float* __restrict__ L,
                                             float* __restrict__ L_b,
                                             float* __restrict__ B, float* __restrict__ S,
                                             float* __restrict__ B_b, float* __restrict__ S_b,
                                             int N, int Nmat, int Nopt, float delta,
                                             int P, int path)
{
    // Discount factors B[n] and annuities S[n] from the option start on.
    float b = 1.0f;
    float s = 0.0f;
#pragma unroll 1
    for (int n = Nmat; n < N; n++) {
        b = b / (1.0f + delta * L[n * P + path]);
        s = s + delta * b;
        B[n * P + path] = b;
        S[n * P + path] = s;
        B_b[n * P + path] = 0.0f;
        S_b[n * P + path] = 0.0f;
    }

    // Swaption payoffs, seeding the adjoints of B and S at each maturity.
    float v = 0.0f;
#pragma unroll 1
    for (int k = 0; k < Nopt; k++) {
        int m = (maturities[k] + Nmat - 1) * P + path;
        float rate = swaprates[k];
        float swapval = B[m] + rate * S[m] - 1.0f;
        if (swapval < 0.0f) {
            v += -100.0f * swapval;
            S_b[m] += -100.0f * rate;
            B_b[m] += -100.0f;
        }
    }

    // Backward sweep: adjoints of B and S turned into adjoints of L.
#pragma unroll 1
    for (int n = N - 1; n >= Nmat; n--) {
        int at = n * P + path;
        float Ln = L[at];
        float bb = B_b[at] + delta * S_b[at];
        L_b[at] = -bb * B[at] * delta / (1.0f + delta * Ln);
        if (n > Nmat) {
            S_b[at - P] += S_b[at];
            B_b[at - P] += bb / (1.0f + delta * Ln);
        }
    }

    // Discount back to time 0 over the first Nmat periods (Figure 4 of the TOM paper).
    b = 1.0f;
#pragma unroll 1
    for (int n = 0; n < Nmat; n++) {
        b = b / (1.0f + delta * L[n * P + path]);
    }
    v = b * v;
#pragma unroll 1
    for (int n = 0; n < Nmat; n++) {
        L_b[n * P + path] = -v * delta / (1.0f + delta * L[n * P + path]);
    }
#pragma unroll 1
    for (int n = Nmat; n < N; n++) {
        L_b[n * P + path] = b * L_b[n * P + path];
    }
    return v;
}

extern "C" __global__ void lib_path_portfolio(const float* __restrict__ z,
                                              const float* __restrict__ lambda,
                                              const int* __restrict__ maturities,
                                              const float* __restrict__ swaprates,
                                              float* __restrict__ L,
                                              float* __restrict__ L_b,
                                              float* __restrict__ B,
                                              float* __restrict__ S,
                                              float* __restrict__ B_b,
                                              float* __restrict__ S_b,
                                              float* __restrict__ v_out,
                                              int N, int Nmat, int Nopt,
                                              float delta, float L0, int num_paths)
{
    int path = blockIdx.x * blockDim.x + threadIdx.x;
    if (path >= num_paths) {
        return;
    }
#pragma unroll 1
    for (int i = 0; i < N; i++) {
        L[i * num_paths + path] = L0;
    }
    path_calc(z, lambda, L, N, Nmat, delta, num_paths, path);
    v_out[path] = portfolio_b(maturities, swaprates, L, L_b, B, S, B_b, S_b,
                              N, Nmat, Nopt, delta, num_paths, path);
}
