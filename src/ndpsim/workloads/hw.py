"""HW: heart-wall-like tracking with the access pattern of Rodinia's heartwall (TOM suite).

Sample points on the wall of a synthetic, periodically contracting "heart" are followed through
a sequence of noisy grey-level frames. The first kernel cuts and normalizes one template per
point from the first frame; then the host loops over the frames, launching one CTA per point that
scores every displacement in a search window by normalized cross-correlation (template-sized
windows of the frame read from global memory, heavily overlapping between threads) and moves the
point to the best one with a shared-memory argmax. It is in the suite for its compute-heavy,
cache-friendly 2-D stencil-like reads with small grids and a host loop.
"""

from __future__ import annotations

import numpy as np

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import Device, Workload, register

FLT_MAX = np.finfo(np.float32).max


def heart_frames(
    rng: np.random.Generator,
    height: int,
    width: int,
    frames: int,
    *,
    period: float = 12.0,
    amplitude: float = 0.06,
    drift: tuple[float, float] = (0.4, -0.3),
    noise: float = 0.05,
) -> np.ndarray:
    """``frames`` float32 images of a bright elliptic wall, a few Gaussian blobs and a smooth
    speckle texture, all contracting and expanding about the image centre (scale
    ``1 + amplitude * sin(2 pi t / period)``) and drifting by ``drift`` pixels per frame, with
    fresh Gaussian noise in every frame."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    cy, cx = (height - 1) / 2, (width - 1) / 2
    # speckle: white noise low-passed by a Gaussian of sigma 1.5 pixels (in Fourier space)
    fy = np.fft.fftfreq(height)[:, None]
    fx = np.fft.fftfreq(width)[None, :]
    low_pass = np.exp(-2 * (np.pi * 1.5) ** 2 * (fy**2 + fx**2))
    speckle = np.fft.ifft2(np.fft.fft2(rng.standard_normal((height, width))) * low_pass).real
    speckle /= speckle.std()
    blobs = rng.random((12, 4)) * [height, width, 0.04 * min(height, width), 0.5]

    def scene(y, x):
        radius = np.hypot((y - cy) / (0.5 * height), (x - cx) / (0.5 * width))
        image = np.exp(-(((radius - 0.62) / 0.12) ** 2))
        for by, bx, sigma, amp in blobs:
            image += amp * np.exp(-((y - by) ** 2 + (x - bx) ** 2) / (2 * (sigma + 2) ** 2))
        return image

    out = np.empty((frames, height, width), dtype=np.float32)
    for t in range(frames):
        scale = 1 + amplitude * np.sin(2 * np.pi * t / period)
        sy = cy + (yy - cy - drift[0] * t) / scale  # where this pixel was in the rest scene
        sx = cx + (xx - cx - drift[1] * t) / scale
        # the speckle moves with the tissue: bilinear sample of the rest texture
        y0 = np.clip(np.floor(sy).astype(int), 0, height - 2)
        x0 = np.clip(np.floor(sx).astype(int), 0, width - 2)
        wy = np.clip(sy - y0, 0, 1)
        wx = np.clip(sx - x0, 0, 1)
        texture = (
            speckle[y0, x0] * (1 - wy) * (1 - wx)
            + speckle[y0 + 1, x0] * wy * (1 - wx)
            + speckle[y0, x0 + 1] * (1 - wy) * wx
            + speckle[y0 + 1, x0 + 1] * wy * wx
        )
        image = scene(sy, sx) + 0.2 * texture + noise * rng.standard_normal((height, width))
        out[t] = image
    return out


def wall_points(rng, height: int, width: int, count: int, margin: int) -> np.ndarray:
    """``count`` (y, x) int32 points, alternately on the inner and outer edge of the wall (as
    heartwall follows the endocardium and the epicardium), at jittered angles."""
    angles = 2 * np.pi * (np.arange(count) + rng.random(count)) / count
    edge = np.where(np.arange(count) % 2 == 0, 0.5, 0.74)
    y = (height - 1) / 2 + edge * 0.5 * height * np.sin(angles)
    x = (width - 1) / 2 + edge * 0.5 * width * np.cos(angles)
    points = np.stack([np.rint(y), np.rint(x)], axis=1)
    points[:, 0] = np.clip(points[:, 0], margin, height - 1 - margin)
    points[:, 1] = np.clip(points[:, 1], margin, width - 1 - margin)
    return points.astype(np.int32)


def _tree_sum(values: np.ndarray) -> np.ndarray:
    """Row sums in the order of the kernel's shared-memory tree (row length a power of two)."""
    values = values.copy()
    stride = values.shape[1] // 2
    while stride > 0:
        values[:, :stride] = values[:, :stride] + values[:, stride : 2 * stride]
        stride //= 2
    return values[:, 0]


@register
class HeartWall(Workload):
    name = "hw"
    title = "heart-wall tracking by template matching (Rodinia heartwall)"
    papers = ("tom",)
    sizes = {
        "tiny": {"height": 64, "width": 64, "frames": 3, "points": 8, "radius": 3, "search": 3,
                 "block": 64},
        "small": {"height": 609, "width": 590, "frames": 12, "points": 256, "radius": 4,
                  "search": 5, "block": 128},
        # heartwall's video is 609 x 590 with 51 points (20 endocardium, 31 epicardium); its run
        # script tracks 20 frames
        "paper": {"height": 609, "width": 590, "frames": 20, "points": 51, "radius": 10,
                  "search": 10, "block": 512},
    }  # fmt: skip
    # The kernel uses the _rn intrinsics (no fused multiply-add), and the reference performs the
    # same float32 operations in the same order, so scores match bit for bit and the argmax (ties
    # go to the lowest candidate in both) picks the same displacement.
    rtol = 0.0
    atol = 0.0

    def inputs(self, rng):
        p = self.params
        margin = p["radius"] + p["search"]
        frames = heart_frames(rng, p["height"], p["width"], p["frames"])
        points = wall_points(rng, p["height"], p["width"], p["points"], margin)
        return {"frames": frames, "points": points}

    def run(self, device: Device, inputs):
        p = self.params
        frames, points = inputs["frames"], inputs["points"]
        count, (height, width) = len(points), frames.shape[1:]
        frame_bytes = height * width * 4
        n = (2 * p["radius"] + 1) ** 2
        block = p["block"]
        if block & (block - 1) or not n <= block <= 512:
            raise WorkloadError(f"hw: block {block} must be a power of two in [{n}, 512]")
        d_frames = device.to_device(frames, "frames")
        d_track = device.zeros(len(frames) * count * 2, np.int32, "track")
        d_scores = device.zeros((len(frames) - 1) * count, np.float32, "scores")
        d_templates = device.zeros(count * n, np.float32, "templates")
        device.write(d_track, points)
        device.launch(
            "hw_templates", count, p["block"],
            [d_frames, np.int32(width), d_track, np.int32(p["radius"]), d_templates],
        )  # fmt: skip
        for f in range(1, len(frames)):
            device.launch(
                "hw_track", count, p["block"],
                [d_frames + f * frame_bytes, np.int32(width), np.int32(height), d_templates,
                 np.int32(p["radius"]), np.int32(p["search"]),
                 d_track + (f - 1) * count * 8, d_track + f * count * 8,
                 d_scores + (f - 1) * count * 4],
            )  # fmt: skip
        return {
            "track": device.from_device(d_track, np.int32, len(frames) * count * 2).reshape(
                len(frames), count, 2
            ),
            "scores": device.from_device(d_scores, np.float32, (len(frames) - 1) * count).reshape(
                len(frames) - 1, count
            ),
        }

    def reference(self, inputs):
        p = self.params
        frames, points = inputs["frames"], inputs["points"].astype(np.int64)
        radius, search, block = p["radius"], p["search"], p["block"]
        height, width = frames.shape[1:]
        side = 2 * radius + 1
        n = side * side
        count = len(points)
        ty, tx = np.divmod(np.arange(n), side)

        # templates: zero mean, unit norm, sums taken in the kernel's tree order
        window = frames[0][points[:, :1] - radius + ty, points[:, 1:] - radius + tx]
        padded = np.zeros((count, block), dtype=np.float32)
        padded[:, :n] = window
        mean = _tree_sum(padded) / np.float32(n)
        centred = window - mean[:, None]
        padded[:, :n] = centred * centred
        templates = centred / np.sqrt(_tree_sum(padded))[:, None]

        wide = 2 * search + 1
        dy, dx = np.divmod(np.arange(wide * wide), wide)
        margin = radius + search
        track = [points]
        scores = []
        for frame in frames[1:]:
            pos = track[-1]
            top = pos[:, :1] + dy - search - radius
            left = pos[:, 1:] + dx - search - radius
            sf = np.zeros(top.shape, dtype=np.float32)
            sff = np.zeros_like(sf)
            sft = np.zeros_like(sf)
            for r in range(side):
                for c in range(side):
                    f = frame[top + r, left + c]
                    sf = sf + f
                    sff = sff + f * f
                    sft = sft + f * templates[:, r * side + c, None]
            var = sff - (sf * sf) / np.float32(n)
            with np.errstate(invalid="ignore"):
                score = np.where(var > 0, sft / np.sqrt(var), np.float32(-FLT_MAX))
            best = np.argmax(score, axis=1)  # the first of equal maxima, as the kernel
            new = np.stack(
                [
                    np.clip(pos[:, 0] + dy[best] - search, margin, height - 1 - margin),
                    np.clip(pos[:, 1] + dx[best] - search, margin, width - 1 - margin),
                ],
                axis=1,
            )
            track.append(new)
            scores.append(score[np.arange(count), best])
        return {
            "track": np.stack(track).astype(np.int32),
            "scores": np.stack(scores).astype(np.float32),
        }
