#!/usr/bin/env bash
# torch_fl's GPU test run on an NVIDIA GPU host: builds with the cuda plugin,
# then test suites, conformance and benchmarks against native CUDA, in named
# stages (test/gpu/run.py says which, their time limits and outputs).
#
#   bash test/gpu/run.sh [--out DIR] [--pack] [--list] [STAGE | GROUP ...]
#
# Lay out .device/ first, on a machine with network (the GPU host has none):
#   bash test/gpu/prepare_device.sh
# GPU_PYTHON picks the python that runs it and every stage (default python3:
# the one with the host's CUDA torch).
set -euo pipefail
exec "${GPU_PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/run.py" "$@"
