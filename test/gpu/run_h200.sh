#!/usr/bin/env bash
# shellcheck disable=SC2317  # the stage functions run through `bash -c NAME`
# The GPU machine's run of the CUDA issue's deliverables, from a copy of this
# working tree: builds, test suites and benchmarks, each stage under its own
# time limit, independent stages going on after a failure, every stage's
# status in a summary table at the end (also $OUT/summary.txt), everything in
# $OUT/log.txt.
#
#   bash test/gpu/run_h200.sh [STAGE ...]      (default: all, in this order)
#
# It needs .device/ (wheels, toml++ headers) carried with the tree: lay it out
# here first with `bash test/gpu/prepare_device.sh` (a fresh checkout has none).
#
#   0 env            GPU, driver, torch, nvcc facts -> env.txt
#   1 wheels         .device/wheels/*.whl whose package is not importable (flag_gems always)
#   2 cpu-build      the CPU-only configuration (-DFLAGOS_WITH_CUDA_PLUGIN=OFF) -> cpu_build.txt
#   2 cpu-suite      test/run_all.py on the host plugin, against this torch -> cpu_suite.txt
#   2 confs-regen    tools.routing_conf generate against this (CUDA) torch -> confs_h200/, confs_h200.diff
#   3 cuda-build     the cuda plugin with CUDA boxing -> cuda_build.txt
#   3 confs-install  the regenerated cuda confs into the installed confs folder, checked
#   4 conformance    python -m torch_fl conformance cuda -> conformance_cuda.{txt,json}
#   5 torch-suite    pytest test/torch (OpInfo aside) on flagos/cuda -> torch_suite_cuda.{txt,xml}
#   6 opinfo         pytest test/torch/test_opinfo.py on flagos/cuda -> opinfo_cuda.{txt,xml}
#   7 gpu-tests      pytest test/gpu, the flaggems route aside -> gpu_tests.{txt,xml}
#   8 bench          python -m tools.bench.gpu -> bench_gpu.{json,md}
#   9 host-profile   python -m tools.bench.host_profile: host time per call by
#                    function, cuda vs flagos (a sampling profiler) -> host_profile.md
#  10 op-cost        python -m tools.bench.op_cost: host time per call of GPT-2
#                    training's costliest operators, cuda vs flagos -> op_cost.md
#  11 perf           python -m tools.bench.perf_profile: CPU µs per GPT-2 training
#                    step and per op_cost call, by library and function, cuda vs
#                    flagos, sampled by Linux perf from outside the process (the
#                    machine's perf, else .device/perf from tools/bench/bundle_perf.sh;
#                    says so where neither is there) -> perf_profile.md
#  12 route-cost     python -m tools.bench.route_cost: the flaggems route's own
#                    host cost per call, taken apart -> route_cost.md
#  13 flaggems-tests pytest test/gpu/test_flaggems_route.py (FlagGems autotunes
#                    its matmuls: up to ~8 min on a fresh machine, alone in a
#                    command) -> flaggems_tests.{txt,xml}
#  14 flaggems-layouts python -m tools.flaggems_layouts: which operand layouts
#                    FlagGems gets right natively, and through the flaggems
#                    route -> flaggems_layouts.md
#  15 flaggems-cache what FlagGems tuned and generated on this machine
#                    ($FLAGGEMS_CACHE_DIR) -> flaggems_cache.tgz; put it at
#                    test/gpu/flaggems_cache.tgz (tracked) or
#                    .device/flaggems_cache.tgz and a later fresh machine
#                    starts from it instead of autotuning its matmuls again
#  16 flaggems-culprits python -m tools.flaggems_culprits [--fixed]: which
#                    FlagGems operators make a small GPT-2's training step
#                    wrong on native CUDA, as they are and wrapped as the
#                    flaggems route wraps them (no torch_fl build needed)
#                    -> flaggems_culprits{.md,.json,_fixed.json}
#
# A STAGE is a name or a number (a number runs all its stages). One command
# on the GPU machine may run 10 minutes, so split the run, e.g.
#   bash test/gpu/run_h200.sh 0 1 2        (~7 min)
#   bash test/gpu/run_h200.sh 3 4 5 7 8    (~7 min)
#   bash test/gpu/run_h200.sh 6            (OpInfo: 3613 cases in 4 shards side by
#                                           side; cut at H200_OPINFO_LIMIT, after
#                                           which pytest still writes its summary)
# Later commands find the earlier builds in build/ (kept between commands on
# a warm machine) and the state in build/h200/.
#
#   bash test/gpu/run_h200.sh suites         (torch-suite and opinfo side by side)
#
# One command that fits the device tool's 10 minutes and its 8 returned files:
#   H200_PACK=1 H200_OPINFO_LIMIT=400 bash test/gpu/run_h200.sh env wheels cuda-build \
#     confs-regen confs-install suites gpu-tests
# The flaggems route's checks in one command (FlagGems' tuning comes from
# test/gpu/flaggems_cache.tgz; without it the first matmuls autotune for minutes):
#   H200_FLAGGEMS_LIMIT=420 bash test/gpu/run_h200.sh env wheels cuda-build \
#     flaggems-layouts flaggems-culprits flaggems-tests flaggems-cache
# Never wait for a background stage with `pgrep -f <this script's name>` from the
# command line: the pattern matches the command's own shell.
#
# Environment: OUT (results folder; default build/h200/out), H200_PACK (1: pack
# $OUT into h200.tgz at the end, also when stopped by TERM), H200_PYTHON
# (python3), H200_USE_REGENERATED_CONFS (1), H200_CPU_SUITE_ARGS
# (--jobs 17 --shards 4 --stop-after 300: run_all's suites in 4 shards each,
# side by side), H200_OPINFO_LIMIT (seconds, 540),
# H200_OPINFO_SHARDS (4 processes), H200_OPINFO_ARGS, H200_OPINFO_REFERENCE (cpu: the device
# OpInfo compares flagos with; cuda: native CUDA, forward/out/in-place only),
# H200_BENCH_JOBS (tools.bench.gpu's default),
# H200_BENCH_ARGS (e.g. --dry-run to try the script without a GPU), H200_OP_COST_ARGS, H200_PERF_ARGS,
# H200_HOST_PROFILE_ARGS (e.g. --seconds 2), H200_FLAGGEMS_LIMIT (seconds, 570),
# H200_FLAGGEMS_K (a pytest -k expression for flaggems-tests, e.g. "not gpt2"),
# FLAGGEMS_CACHE_DIR (FlagGems' own variable; default build/h200/flaggems_cache,
# filled from .device/flaggems_cache.tgz where that was carried, else from
# test/gpu/flaggems_cache.tgz).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$ROOT/build/h200/out}
STATE=$ROOT/build/h200
PY=${H200_PYTHON:-python3}
mkdir -p "$OUT" "$STATE"
cd "$ROOT" || exit 1
exec > >(tee -a "$OUT/log.txt") 2>&1

export ROOT OUT STATE PY
export MAX_JOBS=16 FLAGOS_BUILD_JOBS=16 CMAKE_BUILD_PARALLEL_LEVEL=16
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
# The image's CC/CXX are /opt/gcc, which links libstdc++ statically: the core
# it built carried a second libstdc++ beside torch's, and the first number
# streamed into an error message crashed (cmake/FlagosTorch.cmake now refuses
# a g++ without a shared libstdc++). Build with the system's g++.
if [[ -x /usr/bin/g++ ]]; then export CC=/usr/bin/gcc CXX=/usr/bin/g++; fi
# torch_fl imports with this conf where a stage must not depend on the
# shipped confs (finding the confs folder, checking a build).
printf '[conf]\n' >"$STATE/empty.toml"
export EMPTY_CONF=$STATE/empty.toml
# FlagGems autotunes a matmul shape for minutes on first use and keeps the
# result under this folder: a kept one spares a fresh machine that work. A
# carried .device/flaggems_cache.tgz (a later run's) wins over the tracked
# test/gpu/flaggems_cache.tgz (the tests' shapes, H200, FlagGems 5.0.2,
# Triton 3.6), which a fresh checkout has.
export FLAGGEMS_CACHE_DIR=${FLAGGEMS_CACHE_DIR:-$STATE/flaggems_cache}
for seed in "$ROOT/.device/flaggems_cache.tgz" "$ROOT/test/gpu/flaggems_cache.tgz"; do
  [[ -d $FLAGGEMS_CACHE_DIR || ! -f $seed ]] && continue
  mkdir -p "$FLAGGEMS_CACHE_DIR" && tar xzf "$seed" -C "$FLAGGEMS_CACHE_DIR" &&
    echo "FlagGems cache: started from ${seed#"$ROOT"/}"
done

# ------------------------------------------------------------------ stages
# Each runs in its own bash (so `timeout` can stop it) and writes its own
# files under $OUT; the last line of its main file is its summary note.

stage_env() {
  {
    date -u
    uname -a
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || echo "nvidia-smi failed"
    "$PY" -c "import sys, torch; print('python', sys.version.split()[0]); print('torch', torch.__version__, \
'cuda', torch.version.cuda, 'available', torch.cuda.is_available(), 'devices', torch.cuda.device_count())"
    for pkg in triton transformers flag_gems; do
      "$PY" -c "import $pkg; print('$pkg', $pkg.__version__)" 2>/dev/null || echo "$pkg: not importable"
    done
    /usr/local/cuda/bin/nvcc --version 2>/dev/null || nvcc --version 2>/dev/null || echo "nvcc: not found"
    cmake --version | head -n 1
    gcc --version | head -n 1
    echo "cores: $(nproc)"
  } 2>&1 | tee -i "$OUT/env.txt"
}

install_wheels() {
  shopt -s nullglob
  local wheels=() w dist module
  for w in "$ROOT"/.device/wheels/*.whl; do
    dist=$(basename "$w")
    dist=${dist%%-*}
    dist=${dist,,}
    case $dist in
      pyyaml) module=yaml ;;
      *) module=$dist ;;
    esac
    if [[ $module != flag_gems ]] && "$PY" -c "import $module" 2>/dev/null; then
      echo "already importable: $module"
      continue
    fi
    wheels+=("$w")
  done
  if ((${#wheels[@]} == 0)); then
    echo "[flagos] no wheel to install under .device/wheels (was it carried?)"
    return 1
  fi
  "$PY" -m pip install --no-deps --no-index --break-system-packages "${wheels[@]}" &&
    "$PY" -c "import flag_gems; print('flag_gems', flag_gems.__version__, 'imports')"
}

stage_wheels() {
  install_wheels 2>&1 | tee -i "$OUT/wheels.txt"
}

# pip_build FILE VAR=VALUE...: the editable build and install, with the
# given environment; the whole output goes to FILE, its tail to the log.
pip_build() {
  local file=$1 rc
  shift
  env "$@" "$PY" -m pip install --no-build-isolation --no-deps --break-system-packages -v -e . >"$file" 2>&1
  rc=$?
  grep -E '\[flagos\]|plugins/cuda|error|Error' "$file" | grep -v '^ *-- Performing Test' | tail -n 30
  tail -n 5 "$file"
  return "$rc"
}

stage_cpu_build() {
  pip_build "$OUT/cpu_build.txt" \
    "CMAKE_ARGS=-DTOMLPP_INCLUDE_DIR=$ROOT/.device/include -DFLAGOS_WITH_CUDA_PLUGIN=OFF" || return 1
  echo cpu >"$STATE/installed"
  if FLAGOS_BACKEND_CONFIG=$EMPTY_CONF "$PY" -m torch_fl plugins | tee -i -a "$OUT/cpu_build.txt" | grep -q '^cuda '; then
    echo "[flagos] WARNING: FLAGOS_WITH_CUDA_PLUGIN=OFF was not honoured: the cuda plugin was built;" \
      "the CPU suite still runs on the host plugin (FLAGOS_PLUGIN=host)" | tee -i -a "$OUT/cpu_build.txt"
  fi
  echo "CPU-only build installed" | tee -i -a "$OUT/cpu_build.txt"
}

# The test suites import torch's testing helpers, which need expecttest (not
# on the GPU machine): a suite stage run without the wheels stage installs
# the carried wheels itself (session 5 lost its torch 2.11 run to this).
ensure_test_wheels() {
  "$PY" -c "import expecttest" 2>/dev/null && return 0
  echo "expecttest is not importable: installing the carried wheels first"
  install_wheels 2>&1 | tee -i -a "$OUT/wheels.txt"
}

stage_cpu_suite() {
  ensure_test_wheels
  # shellcheck disable=SC2086  # the extra arguments are meant to split
  FLAGOS_PLUGIN=host traced "$OUT/cpu_suite.txt" "$PY" test/run_all.py \
    ${H200_CPU_SUITE_ARGS:---jobs 17 --shards 4 --stop-after 300}
}

stage_confs_regen() {
  rm -rf "$STATE/confs_h200"
  FLAGOS_PLUGIN=host "$PY" -m tools.routing_conf generate --only cuda.toml,cuda_flaggems.toml --out "$STATE/confs_h200" 2>&1 |
    tee -i "$OUT/confs_regen.txt" || return 1
  cp -r "$STATE/confs_h200" "$OUT/confs_h200"
  local c changes
  for c in cuda cuda_flaggems; do
    changes=$(diff -u "confs/$c.toml" "$STATE/confs_h200/$c.toml" | tee -a "$OUT/confs_h200.diff")
    echo "$c.toml: $(grep -c '^"' "confs/$c.toml") routes in the repo, $(grep -c '^"' "$STATE/confs_h200/$c.toml")" \
      "generated here: $(grep -c '^+"' <<<"$changes") added, $(grep -c '^-"' <<<"$changes") removed" \
      "(confs_h200.diff)" | tee -i -a "$OUT/confs_regen.txt"
  done
}

stage_cuda_build() {
  if ! "$PY" -c "import flag_gems" 2>/dev/null; then
    echo "flag_gems is not importable: installing the wheels first"
    install_wheels 2>&1 | tee -i "$OUT/wheels.txt"
  fi
  pip_build "$OUT/cuda_build.txt" FLAGOS_ACCELERATOR=cuda FLAGOS_BUILD_BOXING=1 \
    FLAGOS_BUILD_FLAGGEMS_CPP=0 FLAGOS_BUILD_TILEOPS=0 \
    "CMAKE_ARGS=-DTOMLPP_INCLUDE_DIR=$ROOT/.device/include -DFLAGOS_WITH_CUDA_PLUGIN=ON -DFLAGOS_CUDA_ROOT=/usr/local/cuda" ||
    return 1
  echo cuda >"$STATE/installed"
  # Checked under an empty conf, so that a conf problem is not a build problem.
  FLAGOS_BACKEND_CONFIG=$EMPTY_CONF "$PY" -c "
import sys, torch_fl
info = torch_fl.plugin_info()
print('active plugin:', info)
print('build record kernels:', torch_fl.build_config()['KERNELS'])
sys.exit(0 if info['name'] == 'cuda' else '[flagos] the active plugin is not cuda')" 2>&1 | tee -i -a "$OUT/cuda_build.txt"
}

# Checks both cuda confs in the installed folder against this torch and plugin.
check_confs() {
  local dir=$1 c
  for c in cuda cuda_flaggems; do
    FLAGOS_BACKEND_CONFIG=$EMPTY_CONF "$PY" -m torch_fl conf check "$dir/$c.toml" || return 1
  done
  "$PY" -c "import torch_fl; print('default conf installs:', torch_fl.backend_config_path())"
}

stage_confs_install() {
  local dir
  dir=$(FLAGOS_BACKEND_CONFIG=$EMPTY_CONF "$PY" -c "import torch_fl._routing as r; print(r.confs_dir())") || return 1
  echo "$dir" >"$STATE/confs_dir"
  echo "installed confs: $dir"
  if [[ ${H200_USE_REGENERATED_CONFS:-1} == 1 && -f $STATE/confs_h200/cuda.toml ]]; then
    cp "$STATE/confs_h200/cuda.toml" "$STATE/confs_h200/cuda_flaggems.toml" "$dir/"
    if check_confs "$dir"; then
      echo "confs in use: regenerated against torch $("$PY" -c 'import torch; print(torch.__version__)')"
      return 0
    fi
    echo "[flagos] the regenerated confs do not check: back to the repo's"
  else
    echo "no regenerated confs to install (H200_USE_REGENERATED_CONFS=${H200_USE_REGENERATED_CONFS:-1})"
  fi
  cp confs/cuda.toml confs/cuda_flaggems.toml "$dir/"
  check_confs "$dir" && echo "confs in use: the repo's"
}

stage_confs_install_logged() {
  stage_confs_install 2>&1 | tee -i "$OUT/confs_install.txt"
}

stage_conformance() {
  "$PY" -m torch_fl conformance cuda --json "$OUT/conformance_cuda.json" 2>&1 | tee -i "$OUT/conformance_cuda.txt"
}

# The crash tracer of the newest build (tools/segv_trace: native frames of a
# segfault, this machine having no gdb), or nothing.
segv_trace_lib() { ls -t "$ROOT"/build/*/out/lib/libsegv_trace.so 2>/dev/null | head -n 1; }

# traced FILE CMD...: CMD with the crash tracer preloaded, output to FILE (and
# the log); a crash's frames are then named from the unstripped build.
traced() {
  local file=$1 lib rc
  shift
  lib=$(segv_trace_lib)
  LD_PRELOAD=$lib "$@" 2>&1 | tee -i "$file"
  rc=${PIPESTATUS[0]}
  [[ -n $lib ]] && "$PY" tools/segv_trace/symbolize.py "$file" "$(dirname "$lib")"
  return "$rc"
}

# pytest_stage NAME ARGS...: pytest with JUnit XML; stopped by SIGINT at the
# stage's limit, it still writes its summary and XML.
pytest_stage() {
  local name=$1
  shift
  traced "$OUT/$name.txt" "$PY" -m pytest -q -ra -p no:cacheprovider --junitxml="$OUT/$name.xml" "$@"
}

stage_torch_suite() {
  ensure_test_wheels
  # shellcheck disable=SC2086
  pytest_stage torch_suite_cuda test/torch --ignore=test/torch/test_opinfo.py ${H200_TORCH_SUITE_ARGS:-}
}

# OpInfo in H200_OPINFO_SHARDS processes side by side (--shard K/N, see
# test/torch/conftest.py), each with its own text and XML; opinfo_cuda.txt
# ends with their failures and the summed counts.
stage_opinfo() {
  local n=${H200_OPINFO_SHARDS:-4} k pids=()
  ensure_test_wheels >/dev/null
  for ((k = 1; k <= n; k++)); do
    # shellcheck disable=SC2086
    TORCH_FL_OPINFO_REFERENCE=${H200_OPINFO_REFERENCE:-cpu} \
      pytest_stage "opinfo_cuda_$k" test/torch/test_opinfo.py --shard "$k/$n" \
      --stop-after $((${H200_OPINFO_LIMIT:-540} - 40)) ${H200_OPINFO_ARGS:-} >/dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"  # a shard cut by --stop-after exits 2: the counts decide
  {
    grep -h '^FAILED\|^ERROR' "$OUT"/opinfo_cuda_*.txt
    "$PY" -c "
import glob, sys
sys.path.insert(0, 'test')
from run_all import junit_counts
counts = [junit_counts(x) for x in sorted(glob.glob(sys.argv[1] + '/opinfo_cuda_*.xml'))]
print(f'{len(counts)} shards: {sum(c[0] for c in counts)} passed, {sum(c[1] for c in counts)} failed,'
      f' {sum(c[2] for c in counts)} skipped')
sys.exit(1 if not counts or any(c[1] for c in counts) or not any(c[0] for c in counts) else 0)" "$OUT"
  } 2>&1 | tee -i "$OUT/opinfo_cuda.txt"
}

# torch-suite and opinfo side by side (16 host cores, one GPU): the two
# longest stages in one command's time.
stage_suites() {
  local op rc=0
  ensure_test_wheels  # once, before the two stages run side by side
  stage_opinfo >/dev/null 2>&1 &
  op=$!
  stage_torch_suite || rc=1
  wait "$op" || rc=1
  tail -n 3 "$OUT/opinfo_cuda.txt"
  return "$rc"
}

stage_gpu_tests() {
  pytest_stage gpu_tests test/gpu --ignore=test/gpu/test_flaggems_route.py
}

# Its own stage: on a fresh machine FlagGems autotunes its matmuls for
# minutes (kept in ~/.flaggems for later processes).
stage_flaggems_tests() {
  local select=()
  [[ -n ${H200_FLAGGEMS_K:-} ]] && select=(-k "$H200_FLAGGEMS_K")
  pytest_stage flaggems_tests test/gpu/test_flaggems_route.py "${select[@]}"
}

stage_bench() {
  local args=(--json "$OUT/bench_gpu.json" --md "$OUT/bench_gpu.md")
  [[ -f $STATE/confs_dir ]] && args+=(--confs-dir "$(cat "$STATE/confs_dir")")
  [[ -n ${H200_BENCH_JOBS:-} ]] && args+=(--jobs "$H200_BENCH_JOBS")
  # shellcheck disable=SC2086
  "$PY" -m tools.bench.gpu "${args[@]}" ${H200_BENCH_ARGS:-} 2>&1 | tee -i "$OUT/bench_gpu.txt"
}

stage_host_profile() {
  # --flaggems profiles the flaggems route: the installed FlagGems-primary conf.
  if [[ " ${H200_HOST_PROFILE_ARGS:-} " == *" --flaggems "* && -f $STATE/confs_dir ]]; then
    export FLAGOS_BACKEND_CONFIG
    FLAGOS_BACKEND_CONFIG="$(cat "$STATE/confs_dir")/cuda_flaggems.toml"
  fi
  # shellcheck disable=SC2086  # the extra arguments are meant to split
  "$PY" -m tools.bench.host_profile --md "$OUT/host_profile.md" ${H200_HOST_PROFILE_ARGS:-} 2>&1 >/dev/null |
    tee -i "$OUT/host_profile.txt"
}

stage_op_cost() {
  # shellcheck disable=SC2086  # the extra arguments are meant to split
  "$PY" -m tools.bench.op_cost --md "$OUT/op_cost.md" ${H200_OP_COST_ARGS:-} 2>/dev/null | tee -i "$OUT/op_cost.txt"
}

stage_perf() {
  # shellcheck disable=SC2086  # the extra arguments are meant to split
  "$PY" -m tools.bench.perf_profile --md "$OUT/perf_profile.md" ${H200_PERF_ARGS:-} 2>/dev/null |
    tee -i "$OUT/perf_profile.txt"
}

stage_flaggems_layouts() {
  local confs md=$OUT/flaggems_layouts.md verdict=(right "wrong in places" "did not run") native route
  confs=$("$PY" -c "import torch_fl; print(torch_fl._routing.confs_dir())" 2>/dev/null)
  "$PY" -m tools.flaggems_layouts native >"$md"
  native=$?
  echo >>"$md"
  FLAGOS_BACKEND_CONFIG="$confs/cuda_flaggems.toml" "$PY" -m tools.flaggems_layouts flagos >>"$md"
  route=$?
  printf '\nFlagGems natively: %s; through the flaggems route: %s\n' "${verdict[native]:-failed}" \
    "${verdict[route]:-failed}" >>"$md"
  cat "$md"
  ((route == 0))  # FlagGems' own errors are its own; the route's fail the stage
}

stage_flaggems_cache() {
  [[ -d $FLAGGEMS_CACHE_DIR ]] || { echo "[flagos] no FlagGems cache at $FLAGGEMS_CACHE_DIR"; return 1; }
  tar czf "$OUT/flaggems_cache.tgz" -C "$FLAGGEMS_CACHE_DIR" . || return 1
  echo "FlagGems cache: $(find "$FLAGGEMS_CACHE_DIR" -type f | wc -l) files," \
    "$(du -k "$OUT/flaggems_cache.tgz" | cut -f1) KiB packed -> flaggems_cache.tgz" | tee "$OUT/flaggems_cache.txt"
}

stage_flaggems_culprits() {
  local md=$OUT/flaggems_culprits.md
  # FlagGems as it is, then with the flaggems route's wrappers (--fixed).
  { "$PY" -m tools.flaggems_culprits --json "$OUT/flaggems_culprits.json"
    echo
    "$PY" -m tools.flaggems_culprits --fixed --json "$OUT/flaggems_culprits_fixed.json"; } \
    2>"$OUT/flaggems_culprits.err" | tee "$md"
  # Operators FlagGems gets wrong (exit 1) are the finding, not a failure
  # of the stage; not running (2, or a crash) is.
  (($(grep -c "operators registered" "$md") == 2)) && return 0
  tail -n 5 "$OUT/flaggems_culprits.err"
  return 1
}

stage_route_cost() {
  "$PY" -m tools.bench.route_cost --md "$OUT/route_cost.md" 2>&1 | tee -i "$OUT/route_cost.txt"
}

export -f stage_env install_wheels ensure_test_wheels stage_wheels pip_build stage_cpu_build stage_cpu_suite segv_trace_lib traced \
  stage_confs_regen stage_cuda_build check_confs stage_confs_install stage_confs_install_logged \
  stage_conformance pytest_stage stage_torch_suite stage_opinfo stage_suites stage_gpu_tests stage_flaggems_tests stage_bench \
  stage_host_profile stage_op_cost stage_perf stage_route_cost stage_flaggems_layouts stage_flaggems_cache stage_flaggems_culprits

# name|number|limit (s)|function|main output file|stage it needs
STAGES=(
  "env|0|60|stage_env|env.txt|"
  "wheels|1|180|stage_wheels|wheels.txt|"
  "cpu-build|2|540|stage_cpu_build|cpu_build.txt|"
  "cpu-suite|2|540|stage_cpu_suite|cpu_suite.txt|cpu-build"
  "confs-regen|2|180|stage_confs_regen|confs_regen.txt|cpu-build"
  "cuda-build|3|540|stage_cuda_build|cuda_build.txt|"
  "confs-install|3|180|stage_confs_install_logged|confs_install.txt|cuda-build"
  "conformance|4|240|stage_conformance|conformance_cuda.txt|cuda-build"
  "torch-suite|5|420|stage_torch_suite|torch_suite_cuda.txt|cuda-build"
  "opinfo|6|${H200_OPINFO_LIMIT:-540}|stage_opinfo|opinfo_cuda.txt|cuda-build"
  "suites|56|${H200_OPINFO_LIMIT:-540}|stage_suites|torch_suite_cuda.txt|cuda-build"
  "gpu-tests|7|300|stage_gpu_tests|gpu_tests.txt|cuda-build"
  "bench|8|540|stage_bench|bench_gpu.txt|cuda-build"
  "host-profile|9|240|stage_host_profile|host_profile.txt|cuda-build"
  "op-cost|10|240|stage_op_cost|op_cost.txt|cuda-build"
  "perf|11|300|stage_perf|perf_profile.txt|cuda-build"
  "route-cost|12|180|stage_route_cost|route_cost.txt|cuda-build"
  "flaggems-tests|13|${H200_FLAGGEMS_LIMIT:-570}|stage_flaggems_tests|flaggems_tests.txt|cuda-build"
  "flaggems-layouts|14|180|stage_flaggems_layouts|flaggems_layouts.md|cuda-build"
  "flaggems-cache|15|60|stage_flaggems_cache|flaggems_cache.txt|"
  "flaggems-culprits|16|420|stage_flaggems_culprits|flaggems_culprits.md|"
)

declare -A RESULT SECONDS_TAKEN NOTE
ORDER=()

summary() {
  local name
  {
    echo
    echo "== run_h200.sh summary ($(date -u +%FT%TZ)) =="
    printf '%-14s %-22s %7s  %s\n' stage result seconds "last line of its output"
    for name in "${ORDER[@]}"; do
      printf '%-14s %-22s %7s  %s\n' "$name" "${RESULT[$name]:-not finished}" "${SECONDS_TAKEN[$name]:-}" \
        "${NOTE[$name]:-}"
    done
  } | tee "$OUT/summary.txt"
}
trap summary EXIT
trap 'pack; exit 143' TERM
trap 'exit 130' INT

run_stage() {
  local name=$1 limit=$2 fn=$3 file=$4 needs=$5 start rc
  ORDER+=("$name")
  if [[ -n $needs && -n ${RESULT[$needs]:-} && ${RESULT[$needs]} != ok ]]; then
    RESULT[$name]="skipped ($needs failed)"
    return
  fi
  echo
  echo "=== $name: $(date -u +%FT%TZ), limit ${limit} s"
  start=$(date +%s)
  timeout -s INT -k 30 "$limit" bash -o pipefail -c "$fn"
  rc=$?
  SECONDS_TAKEN[$name]=$(($(date +%s) - start))
  case $rc in
    0) RESULT[$name]=ok ;;
    124) RESULT[$name]="TIMEOUT (${limit} s)" ;;
    *) RESULT[$name]="FAIL (exit $rc)" ;;
  esac
  [[ -f $OUT/$file ]] && NOTE[$name]=$(grep -v '^\s*$' "$OUT/$file" | tail -n 1 | cut -c1-110)
  echo "=== $name: ${RESULT[$name]} after ${SECONDS_TAKEN[$name]} s"
}

REQUESTED=("${@:-all}")
for arg in "${REQUESTED[@]}"; do
  known=0
  for entry in "${STAGES[@]}"; do
    IFS='|' read -r name number _ <<<"$entry"
    [[ $arg == all || $arg == "$name" || $arg == "$number" ]] && known=1
  done
  ((known)) || { echo "[flagos] unknown stage '$arg'"; trap - EXIT; exit 2; }
done

echo "run_h200.sh $(date -u +%FT%TZ): stages ${REQUESTED[*]}; python $PY; results in $OUT"
# Stages run in the order asked for (all: the order above).
for arg in "${REQUESTED[@]}"; do
  for entry in "${STAGES[@]}"; do
    IFS='|' read -r name number limit fn file needs <<<"$entry"
    if [[ $arg == all || $arg == "$name" || $arg == "$number" ]] && [[ -z ${RESULT[$name]:-} ]]; then
      run_stage "$name" "$limit" "$fn" "$file" "$needs"
    fi
  done
done

# H200_PACK=1: everything under $OUT in one h200.tgz beside summary.txt (the
# device tool brings back at most 8 files per command).
pack() {
  [[ ${H200_PACK:-0} == 1 ]] || return 0
  summary
  trap - EXIT
  tar czf /tmp/h200.tgz -C "$OUT" . && find "$OUT" -mindepth 1 ! -name summary.txt -delete &&
    mv /tmp/h200.tgz "$OUT/"
}

status=0
for name in "${ORDER[@]}"; do
  [[ ${RESULT[$name]} == ok ]] || status=1
done
pack
exit "$status"
