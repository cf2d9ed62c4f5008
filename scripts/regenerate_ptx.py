#!/usr/bin/env python3
"""Regenerate the committed PTX of every kernel with nvcc, and its resource usage with ptxas.

Users without nvcc run the committed .ptx files; developers run this after editing a .cu file.
Each .ptx starts with a header naming its source and the source's SHA-256, so the test suite can
tell when a .cu file changed without its PTX being regenerated. Next to it,
``<name>.resources.json`` records what ptxas allocates per kernel for sm_75 (registers per
thread, static shared memory): the GPU timing model needs real register counts for occupancy,
which PTX's virtual registers overstate.

    python scripts/regenerate_ptx.py            # every kernel
    python scripts/regenerate_ptx.py vadd bfs   # some of them
    python scripts/regenerate_ptx.py docs/examples/saxpy.cu   # a .cu file anywhere
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "src" / "ndpsim" / "workloads" / "kernels"
NVCC_FLAGS = ["-ptx", "-arch=sm_75", "-O3"]


def header(cu: Path) -> str:
    digest = hashlib.sha256(cu.read_bytes()).hexdigest()
    return f"// ndpsim: generated from {cu.name} sha256={digest} by nvcc {' '.join(NVCC_FLAGS)}\n"


def resources(ptx: Path) -> dict[str, dict[str, int]]:
    """Registers per thread and static shared bytes per kernel, as ptxas allocates them."""
    report = subprocess.run(
        ["ptxas", "-arch=sm_75", "-v", str(ptx), "-o", "/dev/null"],
        check=True, capture_output=True, text=True,
    ).stderr  # fmt: skip
    out: dict[str, dict[str, int]] = {}
    kernel = None
    for line in report.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            kernel = m.group(1)
            out[kernel] = {"registers": 0, "shared_bytes": 0}
        elif kernel and (m := re.search(r"Used (\d+) registers", line)):
            out[kernel]["registers"] = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                out[kernel]["shared_bytes"] = int(s.group(1))
    return dict(sorted(out.items()))


def regenerate(cu: Path) -> None:
    ptx = cu.with_suffix(".ptx")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ptx.name
        subprocess.run(["nvcc", *NVCC_FLAGS, str(cu), "-o", str(out)], check=True)
        ptx.write_text(header(cu) + out.read_text())
    usage = resources(ptx)
    ptx.with_suffix(".resources.json").write_text(json.dumps(usage, indent=2) + "\n")
    print(f"{cu.name} -> {ptx.name}, {ptx.with_suffix('.resources.json').name}")


def main(names: list[str]) -> int:
    if shutil.which("nvcc") is None:
        print("nvcc is not on PATH; the committed .ptx files are used as they are", file=sys.stderr)
        return 1
    sources = sorted(KERNELS.glob("*.cu"))
    if names:
        sources = [Path(n) if n.endswith(".cu") else KERNELS / f"{n}.cu" for n in names]
    for cu in sources:
        regenerate(cu)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
