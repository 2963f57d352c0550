"""torch_fl's GPU test run: on an NVIDIA GPU host, build torch_fl with the cuda
plugin, then run its test suites, plugin conformance and benchmarks against
native CUDA, stage by stage.

  test/gpu/run.sh [--out DIR] [--pack] [--list] [STAGE | GROUP ...]

With no STAGE, every stage in the order below; otherwise the stages asked for,
in that order, each at most once. Each stage has a time limit: at its limit
the stage's commands get SIGINT (pytest still writes its summary and JUnit
XML), 30 s later SIGKILL, and the stage is marked TIMEOUT. A stage whose
dependency failed earlier in the same run is skipped; every other stage runs
on after a failure. The run ends with a table of each stage's result, seconds
and the last line of its main output (also OUT/summary.txt); everything it
prints is also in OUT/log.txt. Exit status 0 when every stage run is ok, 2 for
an unknown stage.

The GPU host: an NVIDIA GPU, the CUDA toolkit in /usr/local/cuda, CPython 3.12
with a CUDA build of torch, and no network. What it lacks is laid out in
.device/ (git-ignored, copied with the tree) beforehand, on a machine with
network, by `bash test/gpu/prepare_device.sh`: the wheels of FlagGems and of
the test suites' imports (.device/wheels/) and toml++'s headers
(.device/include/). Its image's default compiler links libstdc++ statically,
so the builds use the system's /usr/bin/gcc and g++ where they exist. Builds
stay in build/ and this run's state in build/gpu/, so a later run on the same
machine (say `opinfo` alone) uses the build an earlier one installed.

Stages, with their limit in seconds, their main output file under OUT and
about how long they take on a 16-core H200 host:

  env              60  env.txt               GPU, driver, torch, nvcc facts (10 s)
  wheels          180  wheels.txt            install .device/wheels/*.whl whose package is
                                             not importable, flag_gems always (10 s)
  cpu-build       540  cpu_build.txt         the CPU-only configuration
                                             (1 min)
  cpu-suite       540  cpu_suite.txt         test/run_all.py on the host plugin, against
                                             this torch (3.5 min)
  confs-regen     180  confs_regen.txt       tools.routing_conf generate against this CUDA
                                             torch -> confs_regen/, confs_regen.diff (5 s)
  cuda-build      540  cuda_build.txt        the cuda plugin with CUDA boxing (20 s; 1 min
                                             from scratch)
  confs-install   180  confs_install.txt     the regenerated cuda confs (else the repo's)
                                             into the installed confs folder, checked (25 s)
  conformance     240  conformance_cuda.txt  python -m torch_fl conformance cuda (+ .json)
  torch-suite     420  torch_suite_cuda.txt  pytest test/torch, OpInfo aside, on flagos/cuda
                                             (+ .xml) (1 min)
  opinfo          540  opinfo_cuda.txt       pytest test/torch/test_opinfo.py in 4 shards side
                                             by side (opinfo_cuda_K.{txt,xml}) (1.5 min)
  gpu-tests       300  gpu_tests.txt         pytest test/gpu, the flaggems route aside (1 min)
  bench           540  bench_gpu.txt         python -m tools.bench.gpu (-> bench_gpu.{json,md})
                                             (3 to 5 min)
  compile-bench   540  bench_compile.txt     python -m tools.bench.gpu --jobs compile-infer,
                                             graph-infer, compile-train (-> bench_compile.{json,md}):
                                             compiled and graph-replayed GPT-2 on both sides
                                             (4 to 6 min)
  host-profile    240  host_profile.txt      python -m tools.dev.host_profile: host time per
                                             call by function, cuda vs flagos (45 s)
  op-cost         240  op_cost.txt           python -m tools.bench.op_cost: host time per call
                                             of GPT-2 training's costliest operators
  perf            300  perf_profile.txt      python -m tools.bench.perf_profile: CPU time per
                                             GPT-2 step and per op_cost call, by library and
                                             function, sampled by Linux perf (1 to 4 min)
  route-cost      180  route_cost.txt        python -m tools.bench.route_cost: the flaggems
                                             route's own host cost per call (10 s)
  tileops         420  tileops.txt           the tileops route: pytest test/gpu/test_tileops_cuda.py
                                             (tileops_tests.txt) and python -m tools.bench.tileops
                                             (-> bench_tileops.{md,json}), with .device/tileops'
                                             stack on PYTHONPATH (2 to 4 min, compiles included)
  flaggems-cpp    540  flaggems_cpp.txt      FlagGems' C++ runtime built into build/flaggems_cpp
                                             (test/gpu/flaggems_cpp.sh, 2 min, once), then
                                             python -m tools.bench.flaggems_cpp (1 min)
  flaggems-tests  570  flaggems_tests.txt    pytest test/gpu/test_flaggems_route.py (over 7 min
                                             where FlagGems autotunes its matmuls afresh)
  flaggems-layouts 180 flaggems_layouts.md   python -m tools.dev.flaggems_layouts: operand
                                             layouts FlagGems gets right natively and through
                                             the flaggems route (30 s)
  flaggems-cache   60  flaggems_cache.txt    what FlagGems tuned and generated here
                                             -> flaggems_cache.tgz

The stages from confs-install to flaggems-layouts need cuda-build; cpu-suite
and confs-regen need cpu-build. Groups: `all`; `suites` (torch-suite and
opinfo side by side: 16 host cores, one GPU); `cpu` (cpu-build cpu-suite
confs-regen); `flaggems` (flaggems-cpp flaggems-layouts flaggems-tests flaggems-cache);
`profiles` (host-profile op-cost perf route-cost). A whole run takes about
half an hour.

FlagGems keeps what it autotuned in FLAGGEMS_CACHE_DIR (default
build/gpu/flaggems_cache). A fresh one starts from .device/flaggems_cache.tgz
(an earlier run's flaggems-cache output, copied there) where present, else
from the tracked test/gpu/flaggems_cache.tgz: FlagGems' tuning for the GPU
tests' shapes (H200, FlagGems 5.0.2, Triton 3.6), without which
flaggems-tests spends minutes autotuning its matmuls.

Options: --out DIR (else $OUT, else build/gpu/out), --pack (also GPU_PACK=1:
at the end, everything under OUT but summary.txt packed into OUT/results.tgz).
Environment: GPU_PYTHON (the python run.sh uses; python3), GPU_CPU_SUITE_ARGS
(--jobs 17 --shards 4 --stop-after 300), GPU_USE_REGENERATED_CONFS (1),
GPU_COMPILE_BENCH_JOBS (compile-infer:boxing,graph-infer:boxing,compile-train:boxing),
GPU_TORCH_SUITE_ARGS, GPU_OPINFO_LIMIT (seconds, 540), GPU_OPINFO_SHARDS (4),
GPU_OPINFO_ARGS, GPU_OPINFO_REFERENCE (cpu: what OpInfo compares flagos with;
cuda: native CUDA, forward/out/in-place only), GPU_BENCH_JOBS, GPU_BENCH_ARGS
(e.g. --dry-run, to try the stage without a GPU), GPU_HOST_PROFILE_ARGS (e.g.
--seconds 2; --flaggems profiles the installed cuda_flaggems.toml),
GPU_OP_COST_ARGS, GPU_PERF_ARGS, GPU_FLAGGEMS_LIMIT (seconds, 570),
GPU_FLAGGEMS_K (a pytest -k expression for flaggems-tests, e.g. "not gpt2"),
GPU_TILEOPS_PARTS (tests bench: which halves of the tileops stage run).
"""

from __future__ import annotations

import argparse
import difflib
import glob
import importlib.util
import os
import shlex
import shutil
import signal
import sys
import tarfile
import threading
from pathlib import Path
from typing import Optional

from stage_runner import STAGES, Log, Runner, StageRun, _now, stage

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / "build" / "gpu"
PY = sys.executable
# The stages compare flagos with native CUDA in one process: "cuda" must stay
# CUDA's (docs/compat.md). test_dropin_cuda.py turns the alias on in its child.
os.environ.setdefault("FLAGOS_ALIAS_CUDA", "0")
OPINFO_LIMIT = int(os.environ.get("GPU_OPINFO_LIMIT", "540"))
FLAGGEMS_LIMIT = int(os.environ.get("GPU_FLAGGEMS_LIMIT", "570"))


def _words(var: str, default: str = "") -> list[str]:
    return shlex.split(os.environ.get(var, default))


# ------------------------------------------------------------------ helpers

EMPTY_CONF = STATE / "empty.toml"  # a conf routing nothing: for checks that must not depend on the shipped confs
_wheels_lock = threading.Lock()


def install_wheels(run: StageRun, show: bool = True) -> int:
    """pip-installs .device/wheels/*.whl whose package is not importable
    (flag_gems always), output appended to wheels.txt."""
    wheels = []
    for w in sorted((ROOT / ".device" / "wheels").glob("*.whl")):
        dist = w.name.split("-")[0].lower()
        module = {"pyyaml": "yaml"}.get(dist, dist)
        if module != "flag_gems" and run.quiet([PY, "-c", f"import {module}"]).ok:
            run.note("wheels.txt", f"already importable: {module}", show)
            continue
        wheels.append(w)
    if not wheels:
        run.note("wheels.txt", "[flagos] no wheel to install under .device/wheels "
                 "(bash test/gpu/prepare_device.sh lays them out)", show)
        return 1
    done = run.sh([PY, "-m", "pip", "install", "--no-deps", "--no-index", "--break-system-packages", *wheels],
                  out="wheels.txt", append=True, show=show)
    if not done.ok:
        return done.rc
    return run.sh([PY, "-c", "import flag_gems; print('flag_gems', flag_gems.__version__, 'imports')"],
                  out="wheels.txt", append=True, show=show).rc


def ensure_test_wheels(run: StageRun, show: bool = True) -> None:
    """The suites import torch's testing helpers, which need expecttest (not
    in the GPU host's image): installs the wheels first where it is missing."""
    with _wheels_lock:
        if run.quiet([PY, "-c", "import expecttest"]).ok:
            return
        run.note("wheels.txt", "expecttest is not importable: installing .device/wheels first", show)
        install_wheels(run, show)


def pip_build(run: StageRun, out: str, env: dict) -> int:
    """The editable build and install; the whole output into OUT/out, the
    lines that tell what happened into the log."""
    done = run.sh([PY, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--break-system-packages",
                   "-C", "cmake.define.FLAGOS_BUILD_TESTS=ON", "-v", "-e", "."], out=out, show=False, env=env)
    lines = done.text.splitlines()
    keep = [x for x in lines if any(k in x for k in ("[flagos]", "plugins/cuda", "error", "Error"))
            and not x.lstrip().startswith("-- Performing Test")]
    run.log.say(*keep[-30:], *lines[-5:])
    return done.rc


def segv_trace_lib() -> str:
    """The crash tracer of the newest build (tools/dev/segv_trace: a crash's
    native frames, the GPU host having no gdb), or ""."""
    found = sorted(glob.glob(str(ROOT / "build" / "*" / "out" / "lib" / "libsegv_trace.so")), key=os.path.getmtime)
    return found[-1] if found else ""


def traced(run: StageRun, out: str, cmd: list, env: Optional[dict] = None, show: bool = True) -> int:
    """cmd with the crash tracer preloaded, into OUT/out; a crash's frames are
    then named from the unstripped build."""
    lib = segv_trace_lib()
    done = run.sh(cmd, out=out, show=show, env={**(env or {}), **({"LD_PRELOAD": lib} if lib else {})})
    path = run.out / out
    lines = path.read_text(errors="replace").splitlines(keepends=True) if lib else []
    if any("[segv_trace]" in line for line in lines):
        symbolize = _load(ROOT / "tools" / "dev" / "segv_trace" / "symbolize.py").symbolize
        path.write_text("".join(symbolize(lines, os.path.dirname(lib))))
    return done.rc


def _load(path: Path):
    """The module at path, imported by file (test/ and tools/ are no packages)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_stage(run: StageRun, name: str, args: list, env: Optional[dict] = None, show: bool = True) -> int:
    """pytest into OUT/name.{txt,xml}; interrupted at the stage's limit, it
    still writes its summary and XML."""
    return traced(run, f"{name}.txt", [PY, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider",
                                       f"--junitxml={run.out / name}.xml", *args], env, show)


def confs_dir_installed() -> Optional[str]:
    path = STATE / "confs_dir"
    return path.read_text().strip() if path.is_file() else None


# ------------------------------------------------------------------ stages

@stage("env", 60, "env.txt")
def stage_env(run: StageRun):
    run.out.joinpath("env.txt").write_text("")
    run.note("env.txt", _now())
    run.sh(["uname", "-a"], out="env.txt", append=True)
    smi = run.sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv"],
                 out="env.txt", append=True)
    if not smi.ok:
        run.note("env.txt", "nvidia-smi failed")
    run.sh([PY, "-c", "import sys, torch; print('python', sys.version.split()[0]); print('torch', "
            "torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available(), "
            "'devices', torch.cuda.device_count())"], out="env.txt", append=True)
    for pkg in ("triton", "transformers", "flag_gems"):
        got = run.quiet([PY, "-c", f"import {pkg}; print('{pkg}', {pkg}.__version__)"])
        run.note("env.txt", got.text.strip() if got.ok else f"{pkg}: not importable")
    nvcc = next((p for p in ("/usr/local/cuda/bin/nvcc", shutil.which("nvcc")) if p and os.access(p, os.X_OK)), None)
    if nvcc:
        run.sh([nvcc, "--version"], out="env.txt", append=True)
    else:
        run.note("env.txt", "nvcc: not found")
    for tool in ("cmake", "gcc"):
        got = run.quiet([tool, "--version"])
        run.note("env.txt", got.text.splitlines()[0] if got.ok and got.text else f"{tool}: not found")
    run.note("env.txt", f"cores: {os.cpu_count()}")
    return 0


@stage("wheels", 180, "wheels.txt")
def stage_wheels(run: StageRun):
    run.out.joinpath("wheels.txt").write_text("")
    return install_wheels(run)


@stage("cpu-build", 540, "cpu_build.txt")
def stage_cpu_build(run: StageRun):
    rc = pip_build(run, "cpu_build.txt", {"CMAKE_ARGS": f"-DTOMLPP_INCLUDE_DIR={ROOT}/.device/include"})
    if rc:
        return rc
    # The CUDA-shaped plugins build everywhere (no SDK needed); the CPU suite
    # runs on the host plugin (FLAGOS_PLUGIN=host).
    run.sh([PY, "-m", "torch_fl", "plugins"], out="cpu_build.txt", append=True,
           env={"FLAGOS_BACKEND_CONFIG": str(EMPTY_CONF)})
    run.note("cpu_build.txt", "CPU-only build installed")
    return 0


@stage("cpu-suite", 540, "cpu_suite.txt", needs="cpu-build")
def stage_cpu_suite(run: StageRun):
    ensure_test_wheels(run)
    return traced(run, "cpu_suite.txt", [PY, "test/run_all.py",
                                         *_words("GPU_CPU_SUITE_ARGS", "--jobs 17 --shards 4 --stop-after 300")],
                  env={"FLAGOS_PLUGIN": "host"})


@stage("confs-regen", 180, "confs_regen.txt", needs="cpu-build")
def stage_confs_regen(run: StageRun):
    regen = STATE / "confs_regen"
    shutil.rmtree(regen, ignore_errors=True)
    done = run.sh([PY, "-m", "tools.routing_conf", "generate", "--only", "cuda.toml,cuda_flaggems.toml",
                   "--out", regen], out="confs_regen.txt", env={"FLAGOS_PLUGIN": "host"})
    if not done.ok:
        return done.rc
    shutil.rmtree(run.out / "confs_regen", ignore_errors=True)
    shutil.copytree(regen, run.out / "confs_regen")
    diff_file = run.out / "confs_regen.diff"
    diff_file.write_text("")
    for c in ("cuda", "cuda_flaggems"):
        repo = (ROOT / "confs" / f"{c}.toml").read_text().splitlines(keepends=True)
        here = (regen / f"{c}.toml").read_text().splitlines(keepends=True)
        diff = list(difflib.unified_diff(repo, here, f"confs/{c}.toml", f"regenerated/{c}.toml"))
        with open(diff_file, "a") as f:
            f.writelines(diff)
        in_repo, generated = _routes(repo, '"'), _routes(here, '"')
        added, removed = _routes(diff, '+"'), _routes(diff, '-"')
        run.note("confs_regen.txt", f"{c}.toml: {in_repo} routes in the repo, {generated} generated here: "
                 f"{added} added, {removed} removed (confs_regen.diff)")
    return 0


def _routes(lines: list[str], prefix: str) -> int:
    """Lines starting with prefix: a conf's routes are its lines starting with '"'."""
    return sum(line.startswith(prefix) for line in lines)


@stage("cuda-build", 540, "cuda_build.txt")
def stage_cuda_build(run: StageRun):
    run.out.joinpath("cuda_build.txt").write_text("")
    if not run.quiet([PY, "-c", "import flag_gems"]).ok:
        run.log.say("flag_gems is not importable: installing the wheels first")
        run.out.joinpath("wheels.txt").write_text("")
        install_wheels(run)
    rc = pip_build(run, "cuda_build.txt", {
        "FLAGOS_ACCELERATOR": "cuda", "FLAGOS_BUILD_BOXING": "1", "FLAGOS_BUILD_FLAGGEMS_CPP": "1",
        "FLAGOS_BUILD_TILEOPS": "1",
        "CMAKE_ARGS": f"-DTOMLPP_INCLUDE_DIR={ROOT}/.device/include"})
    if rc:
        return rc
    # Checked under an empty conf, so that a conf problem is not a build problem.
    return run.sh([PY, "-c", """
import sys, torch_fl
info = torch_fl.plugin_info()
print('active plugin:', info)
print('build record kernels:', torch_fl.build_config()['KERNELS'])
sys.exit(0 if info['name'] == 'cuda' else '[flagos] the active plugin is not cuda')"""],
                  out="cuda_build.txt", append=True, env={"FLAGOS_BACKEND_CONFIG": str(EMPTY_CONF)}).rc


def check_confs(run: StageRun, folder: str) -> bool:
    """Both cuda confs in the installed folder, checked against this torch and plugin."""
    for c in ("cuda", "cuda_flaggems"):
        if not run.sh([PY, "-m", "torch_fl", "conf", "check", f"{folder}/{c}.toml"], out="confs_install.txt",
                      append=True, env={"FLAGOS_BACKEND_CONFIG": str(EMPTY_CONF)}).ok:
            return False
    return run.sh([PY, "-c", "import torch_fl; print('default conf installs:', torch_fl.backend_config_path())"],
                  out="confs_install.txt", append=True).ok


def _copy_confs(source: Path, folder: str) -> None:
    for c in ("cuda.toml", "cuda_flaggems.toml"):
        target = Path(folder) / c
        if not (target.exists() and target.samefile(source / c)):
            shutil.copy(source / c, target)


@stage("confs-install", 180, "confs_install.txt", needs="cuda-build")
def stage_confs_install(run: StageRun):
    run.out.joinpath("confs_install.txt").write_text("")
    found = run.sh([PY, "-c", "import torch_fl._routing as r; print(r.confs_dir())"], show=False, stream="stdout",
                   env={"FLAGOS_BACKEND_CONFIG": str(EMPTY_CONF)})
    if not found.ok or not found.text.strip():
        run.note("confs_install.txt", "[flagos] torch_fl does not import: no installed confs folder")
        return found.rc or 1
    folder = found.text.strip()
    (STATE / "confs_dir").write_text(folder + "\n")
    run.note("confs_install.txt", f"installed confs: {folder}")
    regen = STATE / "confs_regen"
    use_regen = os.environ.get("GPU_USE_REGENERATED_CONFS", "1")
    if use_regen == "1" and (regen / "cuda.toml").is_file():
        _copy_confs(regen, folder)
        if check_confs(run, folder):
            torch_version = run.quiet([PY, "-c", "import torch; print(torch.__version__)"]).text.strip()
            run.note("confs_install.txt", f"confs in use: regenerated against torch {torch_version}")
            return 0
        run.note("confs_install.txt", "[flagos] the regenerated confs do not check: back to the repo's")
    else:
        run.note("confs_install.txt", f"no regenerated confs to install (GPU_USE_REGENERATED_CONFS={use_regen})")
    _copy_confs(ROOT / "confs", folder)
    if not check_confs(run, folder):
        return 1
    run.note("confs_install.txt", "confs in use: the repo's")
    return 0


@stage("conformance", 240, "conformance_cuda.txt", needs="cuda-build")
def stage_conformance(run: StageRun):
    return run.sh([PY, "-m", "torch_fl", "conformance", "cuda", "--json", run.out / "conformance_cuda.json"],
                  out="conformance_cuda.txt").rc


@stage("torch-suite", 420, "torch_suite_cuda.txt", needs="cuda-build")
def stage_torch_suite(run: StageRun):
    ensure_test_wheels(run)
    return pytest_stage(run, "torch_suite_cuda", ["test/torch", "--ignore=test/torch/test_opinfo.py",
                                                  *_words("GPU_TORCH_SUITE_ARGS")])


@stage("opinfo", OPINFO_LIMIT, "opinfo_cuda.txt", needs="cuda-build")
def stage_opinfo(run: StageRun):
    """OpInfo in GPU_OPINFO_SHARDS processes side by side (--shard K/N,
    test/torch/conftest.py), each into opinfo_cuda_K.{txt,xml}; opinfo_cuda.txt
    gets their failures and the summed counts."""
    n = int(os.environ.get("GPU_OPINFO_SHARDS", "4"))
    ensure_test_wheels(run, show=False)
    for old in glob.glob(str(run.out / "opinfo_cuda_*")):
        os.unlink(old)
    env = {"TORCH_FL_OPINFO_REFERENCE": os.environ.get("GPU_OPINFO_REFERENCE", "cpu")}
    # Each shard stops taking tests 40 s before the limit, so that it ends on its own.
    args = ["--stop-after", str(run.stage.limit - 40), *_words("GPU_OPINFO_ARGS")]
    shards = [threading.Thread(target=pytest_stage, args=(run, f"opinfo_cuda_{k}", [
        "test/torch/test_opinfo.py", "--shard", f"{k}/{n}", *args]), kwargs={"env": env, "show": False})
        for k in range(1, n + 1)]
    for t in shards:
        t.start()
    for t in shards:
        t.join()
    # A shard cut by --stop-after exits 2: the counts decide.
    junit_counts = _load(ROOT / "test" / "run_all.py").junit_counts
    failures, counts = [], []
    for k in range(1, n + 1):
        txt, xml = run.out / f"opinfo_cuda_{k}.txt", run.out / f"opinfo_cuda_{k}.xml"
        if txt.is_file():
            failures += [x for x in txt.read_text(errors="replace").splitlines() if x.startswith(("FAILED", "ERROR"))]
        try:
            counts.append(junit_counts(str(xml)))
        except Exception:  # no XML, or one cut off mid-write
            failures.append(f"shard {k}/{n}: no readable {xml.name}")
    run.out.joinpath("opinfo_cuda.txt").write_text("")
    for line in failures:
        run.note("opinfo_cuda.txt", line)
    run.note("opinfo_cuda.txt", f"{len(counts)} shards: {sum(c[0] for c in counts)} passed, "
             f"{sum(c[1] for c in counts)} failed, {sum(c[2] for c in counts)} skipped")
    return bool(counts) and len(counts) == n and not any(c[1] for c in counts) and any(c[0] for c in counts)


@stage("gpu-tests", 300, "gpu_tests.txt", needs="cuda-build")
def stage_gpu_tests(run: StageRun):
    return pytest_stage(run, "gpu_tests", ["test/gpu", "--ignore=test/gpu/test_flaggems_route.py"])


@stage("bench", 540, "bench_gpu.txt", needs="cuda-build")
def stage_bench(run: StageRun):
    args = ["--json", run.out / "bench_gpu.json", "--md", run.out / "bench_gpu.md"]
    if confs_dir_installed():
        args += ["--confs-dir", confs_dir_installed()]
    if os.environ.get("GPU_BENCH_JOBS"):
        args += ["--jobs", os.environ["GPU_BENCH_JOBS"]]
    return run.sh([PY, "-m", "tools.bench.gpu", *args, *_words("GPU_BENCH_ARGS")], out="bench_gpu.txt").rc


@stage("compile-bench", 540, "bench_compile.txt", needs="cuda-build")
def stage_compile_bench(run: StageRun):
    jobs = os.environ.get("GPU_COMPILE_BENCH_JOBS", "compile-infer:boxing,graph-infer:boxing,compile-train:boxing")
    args = ["--json", run.out / "bench_compile.json", "--md", run.out / "bench_compile.md", "--jobs", jobs]
    if confs_dir_installed():
        args += ["--confs-dir", confs_dir_installed()]
    return run.sh([PY, "-m", "tools.bench.gpu", *args, *_words("GPU_BENCH_ARGS")], out="bench_compile.txt").rc


@stage("host-profile", 240, "host_profile.txt", needs="cuda-build")
def stage_host_profile(run: StageRun):
    extra, env = _words("GPU_HOST_PROFILE_ARGS"), {}
    if "--flaggems" in extra and confs_dir_installed():  # the flaggems route: the installed FlagGems-primary conf
        env["FLAGOS_BACKEND_CONFIG"] = f"{confs_dir_installed()}/cuda_flaggems.toml"
    return run.sh([PY, "-m", "tools.dev.host_profile", "--md", run.out / "host_profile.md", *extra],
                  out="host_profile.txt", stream="stderr", env=env).rc


@stage("op-cost", 240, "op_cost.txt", needs="cuda-build")
def stage_op_cost(run: StageRun):
    return run.sh([PY, "-m", "tools.bench.op_cost", "--md", run.out / "op_cost.md", *_words("GPU_OP_COST_ARGS")],
                  out="op_cost.txt", stream="stdout").rc


@stage("perf", 300, "perf_profile.txt", needs="cuda-build")
def stage_perf(run: StageRun):
    return run.sh([PY, "-m", "tools.bench.perf_profile", "--md", run.out / "perf_profile.md",
                   *_words("GPU_PERF_ARGS")], out="perf_profile.txt", stream="stdout").rc


@stage("route-cost", 180, "route_cost.txt", needs="cuda-build")
def stage_route_cost(run: StageRun):
    return run.sh([PY, "-m", "tools.bench.route_cost", "--md", run.out / "route_cost.md"], out="route_cost.txt").rc


def tileops_site(run: StageRun) -> Optional[Path]:
    """The tileops stack (.device/tileops/site.tar.xz) unpacked once into
    build/gpu/tileops-site; None where prepare_device.sh did not pack it."""
    site, packed = STATE / "tileops-site", ROOT / ".device" / "tileops" / "site.tar.xz"
    if not (site / "tileops").is_dir():
        if not packed.is_file():
            run.note("tileops.txt", f"[flagos] no {packed.relative_to(ROOT)} (bash test/gpu/prepare_device.sh packs it)")
            return None
        shutil.rmtree(site, ignore_errors=True)
        with tarfile.open(packed) as tar:
            tar.extractall(site)
    return site


@stage("tileops", 420, "tileops.txt", needs="cuda-build")
def stage_tileops(run: StageRun):
    run.out.joinpath("tileops.txt").write_text("")
    site = tileops_site(run)
    if site is None:
        return 1
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    parts = _words("GPU_TILEOPS_PARTS", "tests bench")
    rc = 0
    if "tests" in parts:
        rc |= pytest_stage(run, "tileops_tests", ["test/gpu/test_tileops_cuda.py", "-s"], env)
    if "bench" in parts:
        rc |= run.sh([PY, "-m", "tools.bench.tileops", "--md", run.out / "bench_tileops.md",
                      "--json", run.out / "bench_tileops.json"], out="tileops.txt", append=True, env=env).rc
    return rc


@stage("flaggems-cpp", 540, "flaggems_cpp.txt", needs="cuda-build")
def stage_flaggems_cpp(run: StageRun):
    """FlagGems' C++ runtime built from source (test/gpu/flaggems_cpp.sh),
    then the flaggems_cpp route against the flaggems route."""
    run.out.joinpath("flaggems_cpp.txt").write_text("")
    prefix = ROOT / "build" / "flaggems_cpp"
    if not (prefix / "flaggems_version.txt").exists():
        rc = run.sh(["bash", str(ROOT / "test" / "gpu" / "flaggems_cpp.sh"), str(prefix)], out="flaggems_cpp.txt",
                    append=True, env={"GPU_PYTHON": PY}).rc
        if rc:
            return rc
    source = run.quiet([PY, "-c", "import flag_gems, os; print(os.path.dirname(flag_gems.__file__))"]).text.strip()
    env = {"FLAGGEMS_DIR": str(prefix / "lib" / "cmake" / "FlagGems"), "FLAGGEMS_SOURCE_DIR": source}
    return run.sh([PY, "-m", "tools.bench.flaggems_cpp", "--md", run.out / "bench_flaggems_cpp.md",
                   "--json", run.out / "bench_flaggems_cpp.json"], out="flaggems_cpp.txt", append=True, env=env).rc


@stage("flaggems-tests", FLAGGEMS_LIMIT, "flaggems_tests.txt", needs="cuda-build")
def stage_flaggems_tests(run: StageRun):
    k = os.environ.get("GPU_FLAGGEMS_K")
    return pytest_stage(run, "flaggems_tests", ["test/gpu/test_flaggems_route.py", *(["-k", k] if k else [])])


@stage("flaggems-layouts", 180, "flaggems_layouts.md", needs="cuda-build")
def stage_flaggems_layouts(run: StageRun):
    confs = run.quiet([PY, "-c", "import torch_fl; print(torch_fl._routing.confs_dir())"]).text.strip()
    md = run.out / "flaggems_layouts.md"
    native = run.sh([PY, "-m", "tools.dev.flaggems_layouts", "native"], out=md.name, stream="split").rc
    run.note(md.name, "", show=False)
    route = run.sh([PY, "-m", "tools.dev.flaggems_layouts", "flagos"], out=md.name, append=True, stream="split",
                   env={"FLAGOS_BACKEND_CONFIG": f"{confs}/cuda_flaggems.toml"}).rc
    verdict = {0: "right", 1: "wrong in places", 2: "did not run"}
    run.note(md.name, f"\nFlagGems natively: {verdict.get(native, 'failed')}; "
             f"through the flaggems route: {verdict.get(route, 'failed')}", show=False)
    run.log.write(md.read_text(errors="replace"))
    return route == 0  # FlagGems' own errors are its own; the route's fail the stage


@stage("flaggems-cache", 60, "flaggems_cache.txt")
def stage_flaggems_cache(run: StageRun):
    cache = Path(os.environ["FLAGGEMS_CACHE_DIR"])
    run.out.joinpath("flaggems_cache.txt").write_text("")
    if not cache.is_dir():
        run.note("flaggems_cache.txt", f"[flagos] no FlagGems cache at {cache}")
        return 1
    packed = run.out / "flaggems_cache.tgz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(cache, arcname=".")
    files = sum(len(f) for _, _, f in os.walk(cache))
    run.note("flaggems_cache.txt", f"FlagGems cache: {files} files, {packed.stat().st_size // 1024} KiB packed "
             "-> flaggems_cache.tgz")
    return 0


GROUPS = {
    "cpu": ["cpu-build", "cpu-suite", "confs-regen"],
    "flaggems": ["flaggems-cpp", "flaggems-layouts", "flaggems-tests", "flaggems-cache"],
    "profiles": ["host-profile", "op-cost", "perf", "route-cost"],
}
SIDE_BY_SIDE = {"suites": ["torch-suite", "opinfo"]}


def plan(requested: list[str]) -> list[list[str]]:
    """The steps to run: each a list of stage names run side by side."""
    steps, seen = [], set()
    for arg in requested:
        if arg == "all":
            names = [[n] for n in STAGES]
        elif arg in SIDE_BY_SIDE:
            names = [SIDE_BY_SIDE[arg]]
        else:
            names = [[n] for n in GROUPS.get(arg, [arg])]
        for step in names:
            step = [n for n in step if n not in seen]
            seen.update(step)
            if step:
                steps.append(step)
    return steps


def setup_environment() -> None:
    cores = str(os.cpu_count() or 1)
    os.environ.update(MAX_JOBS=cores, FLAGOS_BUILD_JOBS=cores, CMAKE_BUILD_PARALLEL_LEVEL=cores,
                      HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    # The image's CC/CXX (/opt/gcc) link libstdc++ statically: a core built with
    # them would carry a second libstdc++ beside torch's (cmake/FlagosTorch.cmake
    # refuses such a g++).
    if os.access("/usr/bin/g++", os.X_OK):
        os.environ.update(CC="/usr/bin/gcc", CXX="/usr/bin/g++")
    EMPTY_CONF.write_text("[conf]\n")


def seed_flaggems_cache(log: Log) -> None:
    """FlagGems autotunes a matmul shape for minutes on first use and keeps the
    result in FLAGGEMS_CACHE_DIR: a fresh one starts from an earlier run's
    (.device/flaggems_cache.tgz), else from the tracked one for the GPU tests'
    shapes (test/gpu/flaggems_cache.tgz: H200, FlagGems 5.0.2, Triton 3.6)."""
    cache = Path(os.environ.setdefault("FLAGGEMS_CACHE_DIR", str(STATE / "flaggems_cache")))
    if cache.is_dir():
        return
    for seed in (ROOT / ".device" / "flaggems_cache.tgz", ROOT / "test" / "gpu" / "flaggems_cache.tgz"):
        if seed.is_file():
            cache.mkdir(parents=True)
            with tarfile.open(seed) as tar:
                tar.extractall(cache, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            log.say(f"FlagGems cache: started from {seed.relative_to(ROOT)}")
            return


class Stopped(BaseException):
    def __init__(self, code: int):
        self.code = code


def _stop(signum, frame):
    raise Stopped(128 + signum)


def main(argv: Optional[list[str]] = None) -> int:
    names = ", ".join([*STAGES, "all", *SIDE_BY_SIDE, *GROUPS])
    parser = argparse.ArgumentParser(prog="test/gpu/run.sh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stages", nargs="*", metavar="STAGE", default=["all"])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or STATE / "out"),
                        help="results folder (default $OUT, else build/gpu/out)")
    parser.add_argument("--pack", action="store_true", default=os.environ.get("GPU_PACK") == "1",
                        help="at the end, pack OUT but summary.txt into OUT/results.tgz (also GPU_PACK=1)")
    parser.add_argument("--list", action="store_true", help="print the stages and their limits, run nothing")
    args = parser.parse_args(argv)
    if args.list:
        for st in STAGES.values():
            print(f"{st.name:<17} {st.limit:>4} s  {st.output:<22} {'needs ' + st.needs if st.needs else ''}")
        return 0
    unknown = [a for a in args.stages if a not in STAGES and a != "all" and a not in GROUPS and a not in SIDE_BY_SIDE]
    if unknown:
        print(f"[flagos] unknown stage {', '.join(unknown)} (known: {names})", file=sys.stderr)
        return 2

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    STATE.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)
    runner = Runner(out)
    setup_environment()
    seed_flaggems_cache(runner.log)
    signal.signal(signal.SIGTERM, _stop)
    runner.log.say(f"test/gpu/run.sh {_now()}: stages {' '.join(args.stages)}; python {PY}; results in {out}")
    code = 0
    try:
        for step in plan(args.stages):
            if len(step) == 1:
                runner.run_stage(STAGES[step[0]])
            else:
                runner.run_side_by_side([STAGES[n] for n in step])
        code = 0 if all(runner.result.get(n) == "ok" for n in runner.order) else 1
    except KeyboardInterrupt:
        code = 130
    except Stopped as stop:
        code = stop.code
    finally:
        runner.stop_all()
        runner.summary()
        if args.pack:
            runner.pack()
    return code


if __name__ == "__main__":
    sys.exit(main())
