#!/usr/bin/env bash
# Install ndpsim and run its main job: reproduce TOM (ISCA 2016) at `small` size — the baseline
# GPU against the NDP system with and without offload control and learned data mapping.
set -euo pipefail
cd "$(dirname "$0")/.."
NDPSIM_EXTRAS="" . scripts/_install.sh
ndpsim reproduce tom --size small "$@"
