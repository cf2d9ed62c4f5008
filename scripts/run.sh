#!/usr/bin/env bash
# Install ndpsim and run its main job: interpret the kernel suite at `small` size, check every
# output against its NumPy reference, and print the table.
set -euo pipefail
cd "$(dirname "$0")/.."
NDPSIM_EXTRAS="" . scripts/_install.sh
ndpsim workloads run --size small "$@"
