// RAY: a small ray tracer, one thread per pixel, like the RAY benchmark of the GPGPU-Sim suite
// (TOM suite). Each thread shoots a primary ray from a pinhole camera, finds the nearest of the
// spheres (a list in global memory, every thread looping over all of them) or the ground plane
// y = 0, shades the hit with a point light (ambient + Lambert + a Phong highlight, a shadow ray
// looping over the spheres again), and follows one mirror reflection that is shaded the same way.
// The output is float32 RGB per pixel.
#include <float.h>

#define RAY_EPS 1e-3f       // nearer hits are ignored (no self-intersection)
#define RAY_OFFSET 1e-2f    // secondary rays start this far off the surface, along the normal
#define AMBIENT 0.1f
#define SPECULAR 0.5f       // weight of the highlight (cosine to the power 16)
#define PLANE_GREY 0.6f     // colour of the ground plane
#define PLANE_REFLECT 0.25f
#define SPHERE_FLOATS 8     // centre x, y, z, radius, colour r, g, b, reflectivity

__device__ __forceinline__ float3 add3(float3 a, float3 b)
{
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
}

__device__ __forceinline__ float3 sub3(float3 a, float3 b)
{
    return make_float3(a.x - b.x, a.y - b.y, a.z - b.z);
}

__device__ __forceinline__ float3 scale3(float3 a, float s)
{
    return make_float3(a.x * s, a.y * s, a.z * s);
}

__device__ __forceinline__ float dot3(float3 a, float3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

// Distance along the ray (o, d) (d of unit length) to the sphere, or a negative value for a miss.
__device__ __forceinline__ float hit_sphere(const float* s, float3 o, float3 d)
{
    float3 oc = make_float3(o.x - s[0], o.y - s[1], o.z - s[2]);
    float b = dot3(oc, d);
    // r^2 - |oc|^2 + b^2 computed as r^2 - |q|^2, q the part of oc across the ray: no
    // cancellation between two large squares when the sphere is far away
    float3 q = sub3(oc, scale3(d, b));
    float disc = s[3] * s[3] - dot3(q, q);
    if (disc <= 0.0f) {
        return -1.0f;
    }
    float root = sqrtf(disc);
    float t = -b - root;
    if (t <= RAY_EPS) {
        t = -b + root;  // the ray starts inside the sphere
    }
    return t;
}

// Index of the nearest object hit (count is the ground plane, -1 none) and its distance.
__device__ __forceinline__ int nearest(const float* __restrict__ spheres, int count, float3 o,
                                       float3 d, float* distance)
{
    float best = FLT_MAX;
    int hit = -1;
    for (int i = 0; i < count; i++) {
        float t = hit_sphere(spheres + SPHERE_FLOATS * i, o, d);
        if (t > RAY_EPS && t < best) {
            best = t;
            hit = i;
        }
    }
    if (d.y < 0.0f) {
        float t = -o.y / d.y;
        if (t > RAY_EPS && t < best) {
            best = t;
            hit = count;
        }
    }
    *distance = best;
    return hit;
}

__device__ __forceinline__ float3 sky(float3 d)
{
    float up = fmaxf(d.y, 0.0f);
    return make_float3(0.5f + 0.3f * up, 0.7f + 0.2f * up, 1.0f);
}

// Colour of object `hit` seen along d at p with normal n: ambient, plus diffuse and highlight
// unless a sphere lies between p and the light. The highlight is weighted by the diffuse
// cosine so that it fades out at the terminator.
__device__ __forceinline__ float3 shade(const float* __restrict__ spheres, int count, float3 p,
                                        float3 n, float3 d, float3 base, float3 light)
{
    float3 to_light = sub3(light, p);
    float dist = sqrtf(dot3(to_light, to_light));
    float3 l = scale3(to_light, 1.0f / dist);
    float3 o = add3(p, scale3(n, RAY_OFFSET));
    bool lit = true;
    for (int i = 0; i < count && lit; i++) {
        float t = hit_sphere(spheres + SPHERE_FLOATS * i, o, l);
        if (t > RAY_EPS && t < dist) {
            lit = false;
        }
    }
    float3 color = scale3(base, AMBIENT);
    if (lit) {
        float ndotl = fmaxf(dot3(n, l), 0.0f);
        float3 r = sub3(scale3(n, 2.0f * dot3(n, l)), l);  // l mirrored about n
        float s = fmaxf(-dot3(r, d), 0.0f);
        s = s * s;
        s = s * s;
        s = s * s;
        s = s * s;
        float highlight = SPECULAR * s * ndotl;
        color = add3(color, make_float3(base.x * ndotl + highlight, base.y * ndotl + highlight,
                                        base.z * ndotl + highlight));
    }
    return color;
}

// Point, normal, colour and reflectivity of the hit of object `hit` at distance t along (o, d).
__device__ __forceinline__ void surface(const float* __restrict__ spheres, int count, int hit,
                                        float3 o, float3 d, float t, float3* p, float3* n,
                                        float3* base, float* reflect)
{
    *p = add3(o, scale3(d, t));
    if (hit == count) {
        *n = make_float3(0.0f, 1.0f, 0.0f);
        *base = make_float3(PLANE_GREY, PLANE_GREY, PLANE_GREY);
        *reflect = PLANE_REFLECT;
    } else {
        const float* s = spheres + SPHERE_FLOATS * hit;
        float inv_r = 1.0f / s[3];
        *n = make_float3((p->x - s[0]) * inv_r, (p->y - s[1]) * inv_r, (p->z - s[2]) * inv_r);
        *base = make_float3(s[4], s[5], s[6]);
        *reflect = s[7];
    }
}

// The camera sits at `eye` looking along -z, tilted by `pitch` (a vertical shear of the image
// plane at distance 1), with half the vertical field of view of tangent `tan_half`.
extern "C" __global__ void ray_trace(const float* __restrict__ spheres, int count, int width,
                                     int height, float eye_x, float eye_y, float eye_z,
                                     float tan_half, float pitch, float light_x, float light_y,
                                     float light_z, float* __restrict__ image)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float aspect = (float)width / (float)height;
    float u = (2.0f * ((float)x + 0.5f) / (float)width - 1.0f) * tan_half * aspect;
    float v = (1.0f - 2.0f * ((float)y + 0.5f) / (float)height) * tan_half + pitch;
    float inv_len = 1.0f / sqrtf(u * u + v * v + 1.0f);
    float3 d = make_float3(u * inv_len, v * inv_len, -inv_len);
    float3 o = make_float3(eye_x, eye_y, eye_z);
    float3 light = make_float3(light_x, light_y, light_z);

    float t;
    int hit = nearest(spheres, count, o, d, &t);
    float3 color;
    if (hit < 0) {
        color = sky(d);
    } else {
        float3 p, n, base;
        float reflect;
        surface(spheres, count, hit, o, d, t, &p, &n, &base, &reflect);
        color = shade(spheres, count, p, n, d, base, light);
        if (reflect > 0.0f) {  // one mirror bounce
            float3 rd = sub3(d, scale3(n, 2.0f * dot3(d, n)));
            float3 ro = add3(p, scale3(n, RAY_OFFSET));
            int rhit = nearest(spheres, count, ro, rd, &t);
            float3 rcolor;
            if (rhit < 0) {
                rcolor = sky(rd);
            } else {
                float3 rp, rn, rbase;
                float rreflect;
                surface(spheres, count, rhit, ro, rd, t, &rp, &rn, &rbase, &rreflect);
                rcolor = shade(spheres, count, rp, rn, rd, rbase, light);
            }
            color = add3(scale3(color, 1.0f - reflect), scale3(rcolor, reflect));
        }
    }
    float* out = image + 3 * (y * width + x);
    out[0] = color.x;
    out[1] = color.y;
    out[2] = color.z;
}
