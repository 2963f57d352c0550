#!/usr/bin/env bash
# Lays out .device/ (ignored by git; copied to the GPU host with the working
# tree) with what test/gpu/run.sh needs there and the GPU host lacks, having
# no network to download it:
#   .device/wheels/    flag_gems 5.0.2 and the packages it and the test
#                      suites import that the host's image does not hold
#                      (sqlalchemy, greenlet, expecttest), for CPython 3.12
#   .device/include/   toml++'s headers (the image has no libtomlplusplus-dev)
#   .device/tileops/   the tileops route's stack (tileops, tilelang and their
#                      imports) unpacked into one tree and xz-packed: the
#                      wheels are 85 MB, the tree without TileLang's AMD
#                      kernels and z3's duplicate library packs to 44 MB
#   .device/flaggems_cpp/sources.tar.xz
#                      the sources test/gpu/flaggems_cpp.sh builds FlagGems'
#                      C++ runtime from (no flag-gems distribution ships it):
#                      FlagGems at the wheel's tag, libtriton_jit, fmt and
#                      nlohmann/json at the revisions FlagGems' build fetches;
#                      GIT_BASE (default https://github.com) is where they
#                      are cloned from
# (FlagGems' autotuning for the GPU tests' shapes is tracked instead, as
# test/gpu/flaggems_cache.tgz.) Run it once in a fresh checkout, on a machine
# with network, before copying the tree to the GPU host:
#   bash test/gpu/prepare_device.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DEST="$ROOT/.device"
PY=${PYTHON:-python3}
mkdir -p "$DEST/wheels" "$DEST/include"

# The GPU host's python3 is 3.12 on x86-64; --no-deps because each
# dependency it lacks is named here (its image has numpy, pyyaml, packaging).
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DEST/wheels" flag-gems==5.0.2 sqlalchemy==2.0.48 greenlet expecttest

# toml++ from Debian's package (make setup installs it here).
if [[ ! -f /usr/include/toml++/toml.h ]]; then
  apt-get install -y -q libtomlplusplus-dev >/dev/null ||
    { echo "[flagos] prepare_device: no toml++ headers (apt-get install libtomlplusplus-dev)"; exit 1; }
fi
rm -rf "$DEST/include/toml++" && cp -r /usr/include/toml++ "$DEST/include/"

# tileops 0.1.0 declares torch 2.13; beside the host's torch 2.11 it runs
# with --no-deps and apache-tvm-ffi 0.1.11 (0.1.12 aborts at import tilelang).
TL="$(mktemp -d)"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$TL/wheels" tileops==0.1.0 tilelang==0.1.12 apache-tvm-ffi==0.1.11 z3-solver==4.15.4.0 \
  torch-c-dlpack-ext==0.1.5 ml-dtypes==0.7.0
mkdir -p "$TL/site" "$DEST/tileops"
for w in "$TL"/wheels/*.whl; do "$PY" -m zipfile -e "$w" "$TL/site"; done
rm -rf "$TL"/site/tilelang/3rdparty/composable_kernel "$TL"/site/*.data
ln -sf libz3.so "$TL/site/z3/lib/libz3.so.4.15"
tar -cJf "$DEST/tileops/site.tar.xz" -C "$TL/site" .
rm -rf "$TL"

# FlagGems' C++ runtime: only what its CMake build reads.
FG="$(mktemp -d)"
GIT_BASE=${GIT_BASE:-https://github.com}
source_at() {  # NAME REPO REVISION PATH...
  local name=$1 repo=$2 rev=$3; shift 3
  git clone -q --bare "$GIT_BASE/$repo" "$FG/$name.git"
  mkdir -p "$FG/src/$name"
  git -C "$FG/$name.git" archive "$rev" "$@" | tar -x -C "$FG/src/$name"
}
source_at FlagGems flagos-ai/FlagGems v5.0.2 CMakeLists.txt cmake include lib src/flag_gems/csrc \
  src/flag_gems/__init__.py triton_src
source_at libtriton_jit flagos-ai/libtriton_jit 5c45d228ef5e701b7e69b83bc9c2f20d2f0f84aa CMakeLists.txt cmake \
  include src scripts
source_at fmt fmtlib/fmt 10.2.1 CMakeLists.txt README.md ChangeLog.md LICENSE include src support
source_at json nlohmann/json v3.11.3 CMakeLists.txt cmake include single_include LICENSE.MIT
mkdir -p "$DEST/flaggems_cpp"
tar -cJf "$DEST/flaggems_cpp/sources.tar.xz" -C "$FG/src" .
rm -rf "$FG"

ls "$DEST/wheels" "$DEST/tileops" "$DEST/flaggems_cpp"
du -sh "$DEST"
