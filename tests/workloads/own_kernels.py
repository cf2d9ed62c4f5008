"""Small kernels of our own for the tests of own kernels, saved traces and DRAM requests, as
PTX that nvcc 13.0 generated (``nvcc -ptx -arch=sm_75 -O3``) from the CUDA quoted with each."""

from __future__ import annotations

from pathlib import Path

# extern "C" __global__ void where3d(unsigned* out)
# {
#     unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
#     unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
#     unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
#     unsigned nx = gridDim.x * blockDim.x, ny = gridDim.y * blockDim.y;
#     out[(z * ny + y) * nx + x] = x | (y << 10) | (z << 20);
# }
WHERE3D = """\
.version 9.0
.target sm_75
.address_size 64

	// .globl	where3d

.visible .entry where3d(
	.param .u64 where3d_param_0
)
{
	.reg .b32 	%r<23>;
	.reg .b64 	%rd<5>;


	ld.param.u64 	%rd1, [where3d_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	mov.u32 	%r5, %ctaid.y;
	mov.u32 	%r6, %ntid.y;
	mov.u32 	%r7, %tid.y;
	mad.lo.s32 	%r8, %r5, %r6, %r7;
	mov.u32 	%r9, %ctaid.z;
	mov.u32 	%r10, %ntid.z;
	mov.u32 	%r11, %tid.z;
	mad.lo.s32 	%r12, %r9, %r10, %r11;
	mov.u32 	%r13, %nctaid.x;
	mul.lo.s32 	%r14, %r13, %r2;
	mov.u32 	%r15, %nctaid.y;
	mul.lo.s32 	%r16, %r15, %r6;
	shl.b32 	%r17, %r8, 10;
	or.b32  	%r18, %r17, %r4;
	shl.b32 	%r19, %r12, 20;
	or.b32  	%r20, %r18, %r19;
	mad.lo.s32 	%r21, %r16, %r12, %r8;
	mad.lo.s32 	%r22, %r14, %r21, %r4;
	mul.wide.u32 	%rd3, %r22, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r20;
	ret;

}
"""

# extern "C" __global__ void mix(const float* x, float* y, unsigned* counter)
# {
#     __shared__ float staged[64];
#     unsigned i = threadIdx.x;
#     staged[i] = x[i];
#     __syncthreads();
#     atomicAdd(counter, 1u);
#     y[i] = staged[63 - i];
# }
MIX = """\
.version 9.0
.target sm_75
.address_size 64

	// .globl	mix
// _ZZ3mixE6staged has been demoted

.visible .entry mix(
	.param .u64 mix_param_0,
	.param .u64 mix_param_1,
	.param .u64 mix_param_2
)
{
	.reg .f32 	%f<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<10>;
	// demoted variable
	.shared .align 4 .b8 _ZZ3mixE6staged[256];

	ld.param.u64 	%rd1, [mix_param_0];
	ld.param.u64 	%rd2, [mix_param_1];
	ld.param.u64 	%rd3, [mix_param_2];
	cvta.to.global.u64 	%rd4, %rd2;
	cvta.to.global.u64 	%rd5, %rd3;
	cvta.to.global.u64 	%rd6, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd7, %r1, 4;
	add.s64 	%rd8, %rd6, %rd7;
	ld.global.f32 	%f1, [%rd8];
	shl.b32 	%r2, %r1, 2;
	mov.u32 	%r3, _ZZ3mixE6staged;
	add.s32 	%r4, %r3, %r2;
	st.shared.f32 	[%r4], %f1;
	bar.sync 	0;
	atom.global.add.u32 	%r5, [%rd5], 1;
	mov.u32 	%r6, 63;
	sub.s32 	%r7, %r6, %r1;
	shl.b32 	%r8, %r7, 2;
	add.s32 	%r9, %r3, %r8;
	ld.shared.f32 	%f2, [%r9];
	add.s64 	%rd9, %rd4, %rd7;
	st.global.f32 	[%rd9], %f2;
	ret;

}
"""

# extern "C" __global__ void nothing() {}  (written by hand: a kernel that touches no memory)
NOTHING = """\
.version 9.0
.target sm_75
.address_size 64

.visible .entry nothing()
{
	ret;
}
"""


def write_ptx(directory: Path, name: str) -> Path:
    """The kernel ``name`` (WHERE3D, MIX or NOTHING) written to ``directory/<name>.ptx``."""
    path = directory / f"{name.lower()}.ptx"
    path.write_text(globals()[name])
    return path
