#!/usr/bin/env python3
"""Regenerate the committed PTX of every kernel with nvcc.

Users without nvcc run the committed .ptx files; developers run this after editing a .cu file.
Each .ptx starts with a header naming its source and the source's SHA-256, so the test suite can
tell when a .cu file changed without its PTX being regenerated.

    python scripts/regenerate_ptx.py            # every kernel
    python scripts/regenerate_ptx.py vadd bfs   # some of them
"""

from __future__ import annotations

import hashlib
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


def regenerate(cu: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / cu.with_suffix(".ptx").name
        subprocess.run(["nvcc", *NVCC_FLAGS, str(cu), "-o", str(out)], check=True)
        cu.with_suffix(".ptx").write_text(header(cu) + out.read_text())
    print(f"{cu.name} -> {cu.with_suffix('.ptx').name}")


def main(names: list[str]) -> int:
    if shutil.which("nvcc") is None:
        print("nvcc is not on PATH; the committed .ptx files are used as they are", file=sys.stderr)
        return 1
    sources = sorted(KERNELS.glob("*.cu"))
    if names:
        sources = [KERNELS / f"{n}.cu" for n in names]
    for cu in sources:
        regenerate(cu)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
