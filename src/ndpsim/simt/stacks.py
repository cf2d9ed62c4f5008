"""Compiled bookkeeping of the per-warp SIMT stacks and the pc scheduler.

These loops touch a few values per warp, which NumPy would spread over many tiny array
operations; compiled, each costs about a microsecond. Stack rows are ``(pc, reconvergence pc,
active mask)``; ``sp[w]`` is the depth of warp ``w``'s stack, so its top row is ``sp[w] - 1``.
"""

from __future__ import annotations

import numpy as np

from ndpsim.numba_cache import compiled

RUNNING, WAITING, DONE = 0, 1, 2
PLAIN, BRANCH, EXIT, BARRIER = 0, 1, 2, 3


@compiled(allocates=True)
def next_group(pc, status, out):  # pragma: no cover - compiled
    """The lowest pc of any running warp and the warps at it (written to ``out``)."""
    best = np.iinfo(np.int64).max
    for w in range(pc.shape[0]):
        if status[w] == RUNNING and pc[w] < best:
            best = pc[w]
    count = 0
    if best != np.iinfo(np.int64).max:
        for w in range(pc.shape[0]):
            if status[w] == RUNNING and pc[w] == best:
                out[count] = w
                count += 1
    return best, count


@compiled(allocates=True)
def active_threads(warps, masks, out):  # pragma: no cover - compiled
    """Thread indices of the active lanes of ``warps``, ascending; returns how many."""
    count = 0
    for i in range(warps.shape[0]):
        base = warps[i] * 32
        m = masks[i]
        for lane in range(32):
            if (m >> lane) & 1:
                out[count] = base + lane
                count += 1
    return count


@compiled(allocates=True)
def lane_masks(warps, threads, values):  # pragma: no cover - compiled
    """Per warp of ``warps``, the mask of its threads (in ``threads``) where ``values`` holds."""
    out = np.zeros(warps.shape[0], dtype=np.uint32)
    i = 0
    for k in range(threads.shape[0]):
        w = threads[k] // 32
        while warps[i] != w:
            i += 1
        if values[k]:
            out[i] |= np.uint32(1) << np.uint32(threads[k] % 32)
    return out


@compiled(allocates=True)
def finish_run(
    warps,
    masks,
    kind,
    pc,
    target,
    reconvergence,
    taken,
    stack_pc,
    stack_rpc,
    stack_mask,
    sp,
    status,
    warp_pc,
    end_pc,
):  # pragma: no cover - compiled
    """Apply a run's last instruction to each warp's stack, then pop finished entries.

    ``taken`` holds per warp the lanes whose branch is taken (BRANCH) or that exit (EXIT).
    Divergent warps push the taken path and, above it, the fall-through path, both reconverging
    at ``reconvergence``. Entries whose pc reached their reconvergence pc, or with no lanes left,
    are popped. Returns the deepest stack left, for the caller to keep capacity ahead of it.
    """
    deepest = 0
    for i in range(warps.shape[0]):
        w = warps[i]
        top = sp[w] - 1
        if kind == PLAIN:
            stack_pc[w, top] = pc + 1
        elif kind == BARRIER:
            stack_pc[w, top] = pc + 1
            status[w] = WAITING
        elif kind == EXIT:
            leaving = taken[i]
            for level in range(sp[w]):
                stack_mask[w, level] &= ~leaving
            stack_pc[w, top] = pc + 1
        else:
            t = taken[i]
            n = masks[i] & ~t
            if n == 0:
                stack_pc[w, top] = target
            elif t == 0:
                stack_pc[w, top] = pc + 1
            else:
                stack_pc[w, top] = reconvergence
                stack_pc[w, top + 1] = target
                stack_rpc[w, top + 1] = reconvergence
                stack_mask[w, top + 1] = t
                stack_pc[w, top + 2] = pc + 1
                stack_rpc[w, top + 2] = reconvergence
                stack_mask[w, top + 2] = n
                sp[w] += 2
        # Reconverge: pop entries that are complete.
        while sp[w] > 0:
            top = sp[w] - 1
            if stack_pc[w, top] == stack_rpc[w, top] or stack_mask[w, top] == 0:
                sp[w] -= 1
            else:
                break
        if sp[w] == 0:
            status[w] = DONE
            warp_pc[w] = end_pc
        else:
            warp_pc[w] = stack_pc[w, sp[w] - 1]
            if sp[w] > deepest:
                deepest = sp[w]
    return deepest


@compiled(allocates=True)
def release_barriers(status, warps_per_cta):  # pragma: no cover - compiled
    """Let go every CTA whose live warps all wait at a barrier; returns how many were."""
    released = 0
    for cta in range(status.shape[0] // warps_per_cta):
        base = cta * warps_per_cta
        waiting = 0
        running = 0
        for k in range(warps_per_cta):
            s = status[base + k]
            if s == WAITING:
                waiting += 1
            elif s == RUNNING:
                running += 1
        if waiting > 0 and running == 0:
            for k in range(warps_per_cta):
                if status[base + k] == WAITING:
                    status[base + k] = RUNNING
            released += 1
    return released


@compiled(allocates=True)
def warp_groups(threads):  # pragma: no cover - compiled
    """Group ascending thread indices by warp: each warp, its lane mask, and where its lanes
    start in ``threads``."""
    n = threads.shape[0]
    warps = np.empty(n, dtype=np.int64)
    masks = np.zeros(n, dtype=np.uint32)
    starts = np.empty(n, dtype=np.int64)
    count = -1
    current = -1
    for k in range(n):
        w = threads[k] // 32
        if w != current:
            count += 1
            current = w
            warps[count] = w
            starts[count] = k
        masks[count] |= np.uint32(1) << np.uint32(threads[k] % 32)
    count += 1
    return warps[:count], masks[:count], starts[:count]
