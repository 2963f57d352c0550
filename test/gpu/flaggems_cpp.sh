#!/usr/bin/env bash
# Builds FlagGems' C++ runtime for the flaggems_cpp route (libtriton_jit,
# liboperators.so, the c_operators library that registers flag_gems::<op>)
# from .device/flaggems_cpp/sources.tar.xz (test/gpu/prepare_device.sh) with
# the GPU host's torch, Triton, pybind11 and CUDA toolkit, installs it under
# PREFIX, and records the FlagGems version it was built from there
# (flaggems_version.txt, which torch_fl checks FLAGGEMS_SOURCE_DIR against).
# No flag-gems distribution ships this runtime: it is built from source.
#
#   bash test/gpu/flaggems_cpp.sh PREFIX
# Then: FLAGGEMS_DIR=PREFIX/lib/cmake/FlagGems and FLAGGEMS_SOURCE_DIR=<the
# installed flag_gems package of the same version>.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX="$(mkdir -p "$1" && cd "$1" && pwd)"
PY=${GPU_PYTHON:-python3}
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
tar -xJf "$ROOT/.device/flaggems_cpp/sources.tar.xz" -C "$WORK"
# libtriton_jit calls CUDA 12's cuCtxCreate(ctx, flags, device); CUDA 13's
# takes a parameters struct (none here) before the flags.
if grep -q "cuCtxCreate(CUcontext \*pctx, CUctxCreateParams" "${CUDA_HOME:-/usr/local/cuda}/include/cuda.h"; then
  sed -i 's/cuCtxCreate(&ctx, 0, device)/cuCtxCreate(\&ctx, nullptr, 0, device)/' \
    "$WORK/libtriton_jit/include/triton_jit/backends/cuda_backend.h"
fi

# FlagGems' build fetches libtriton_jit, fmt and json; FETCHCONTENT_SOURCE_DIR_*
# hands it the carried trees instead (the GPU host has no network).
cmake -S "$WORK/FlagGems" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFLAGGEMS_BUILD_C_EXTENSIONS=ON -DFLAGGEMS_BUILD_CTESTS=OFF -DFLAGGEMS_INSTALL=ON -DTRITON_JIT_BUILD_EXAMPLES=OFF \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_TRITONJIT="$WORK/libtriton_jit" \
  -DFETCHCONTENT_SOURCE_DIR_FMT="$WORK/fmt" -DFETCHCONTENT_SOURCE_DIR_JSON="$WORK/json" \
  -DPython_EXECUTABLE="$(command -v "$PY")" -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib
cmake --build "$WORK/build" -j "$(nproc)"
cmake --install "$WORK/build"
# Kernels the runtime reads beside its library (PREFIX/share/flag_gems), which
# FlagGems' install step leaves out.
mkdir -p "$PREFIX/share/flag_gems"
cp -r "$WORK/FlagGems/triton_src" "$PREFIX/share/flag_gems/"
sed -n 's/^__version__ = "\(.*\)"/\1/p' "$WORK/FlagGems/src/flag_gems/__init__.py" > "$PREFIX/flaggems_version.txt"
echo "[flagos] FlagGems C++ runtime $(cat "$PREFIX/flaggems_version.txt") installed under $PREFIX:"
ls "$PREFIX" "$PREFIX/lib"
