#!/usr/bin/env bash
# Copies this machine's Linux `perf` and the shared libraries it needs (all
# but glibc's and the C++ runtime, which any newer host has) into
# .device/perf/, with an rpath of $ORIGIN/lib, so that tools.bench.perf_profile
# can run on a machine that has no perf and no network (the GPU machine):
# .device travels with the working tree. Needs `perf` and `patchelf` here
# (Debian: linux-perf, patchelf).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DEST="$ROOT/.device/perf"
PERF="$(command -v perf)" || { echo "[flagos] bundle_perf: no perf on this machine (apt-get install linux-perf)"; exit 1; }
command -v patchelf >/dev/null || { echo "[flagos] bundle_perf: no patchelf on this machine (apt-get install patchelf)"; exit 1; }
PERF="$(readlink -f "$PERF")"
rm -rf "$DEST" && mkdir -p "$DEST/lib"
cp "$PERF" "$DEST/perf"
ldd "$PERF" | awk '$3 ~ /^\// {print $3}' |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
# DT_RPATH, unlike RUNPATH, also serves the libraries' own dependencies.
patchelf --force-rpath --set-rpath '$ORIGIN/lib' "$DEST/perf"
env -i "$DEST/perf" --version
du -sh "$DEST"
