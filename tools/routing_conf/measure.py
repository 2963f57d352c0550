"""python -m tools.routing_conf measure: which of the active plugin's native
operators compute what the CPU computes, measured by running them. A native
route is listed in a generated conf only on a passing measurement: an
operator's kernel can match its schema and still be wrong for some inputs.

Each operator runs in a child process (a crash or a hang is that operator's
result) whose conf routes that operator alone to `native` (the rest
cpu_fallback), over torch's OpInfo samples for its base name in float32 and
int64: the functional form as the OpInfo calls it, the in-place form through
its in-place variant, the out= form with `out=`.

Execution results are cached (FLAGOS_EXEC_CACHE, on by default) under
$XDG_CACHE_HOME/torch_fl/exec_cache, one file per operator keyed by the
plugin library's content, the torch version, the device and this harness's
version, so a re-run executes only what changed; FLAGOS_EXEC_CACHE=0 runs
every operator again. A vendor library upgraded under an unchanged plugin is
not part of the key: measure again with FLAGOS_EXEC_CACHE=0."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS_VERSION = "1"  # bump when what a measurement runs changes
TIMEOUT_S = 300


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torch_fl", "exec_cache")


def _run_key(plugin_path: str, torch_version: str, device: str):
    """What every verdict of this run is keyed by (the plugin library read
    once): a hash to be completed with the operator's name."""
    digest = hashlib.sha256()
    with open(plugin_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    for part in (torch_version, device, HARNESS_VERSION):
        digest.update(b"\0" + part.encode())
    return digest


def _key(run_key, op: str) -> str:
    digest = run_key.copy()
    digest.update(b"\0" + op.encode())
    return digest.hexdigest()


def _run_child(op: str) -> str:
    """The child's one-line verdict for `op`."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as conf:
        conf.write(f'[conf]\ndefault = "cpu_fallback"\n\n[routes]\n"{op}" = "native"\n')
    env = dict(os.environ, FLAGOS_BACKEND_CONFIG=conf.name)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run([sys.executable, "-m", "tools.routing_conf.measure_one", op], env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"fail: no result within {TIMEOUT_S} s"
    finally:
        os.unlink(conf.name)
    verdict = proc.stdout.strip().splitlines()[-1:] if proc.returncode == 0 else []
    if verdict:
        return verdict[0]
    last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return f"fail: the process ended with {last[:300]}"


def measure(ops: list[str], use_cache: bool, log=print) -> dict[str, str]:
    """Verdicts ("pass ...", "fail: ...", "untested: ...") per operator; the
    active plugin's native kernels must serve every one."""
    import torch
    import torch_fl

    device = torch.flagos.get_device_name(0) if torch.flagos.device_count() else "no device"
    run_key = _run_key(torch_fl.plugin_info()["path"], torch.__version__, device)
    results: dict[str, str] = {}
    os.makedirs(cache_dir(), exist_ok=True)
    for op in ops:
        path = os.path.join(cache_dir(), _key(run_key, op) + ".json")
        if use_cache and os.path.exists(path):
            with open(path) as f:
                results[op] = json.load(f)["verdict"]
            log(f"{op}: {results[op]} (cached)")
            continue
        results[op] = _run_child(op)
        with open(path, "w") as f:
            json.dump({"op": op, "verdict": results[op]}, f)
        log(f"{op}: {results[op]}")
    return results


def native_ops() -> list[str]:
    """Every routable operator the active plugin's native kernels serve."""
    import torch
    from torch_fl import _C, _routing

    from tools.routing_conf.facts import _op_name

    options = _routing.catalog_options()
    ops = []
    for qualified in torch._C._dispatch_get_all_op_names():
        if not qualified.startswith("aten::"):
            continue
        name, _, overload = qualified.partition(".")
        op = _op_name(name, overload)
        if not _C._unroutable_reason(op, options) and _C._native_serves(op):
            ops.append(op)
    return sorted(ops)


def write(path: str, platform: str, results: dict[str, str]) -> None:
    import torch
    import torch_fl

    record = {"platform": platform, "plugin": torch_fl.plugin_info()["name"], "torch": torch.__version__,
              "device": torch.flagos.get_device_name(0), "results": dict(sorted(results.items()))}
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")


def load_measured(folder: str, platform: str) -> dict | None:
    """<folder>/<platform>_native.json (with its file name), or None."""
    path = os.path.join(folder, f"{platform}_native.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        record = json.load(f)
    record["file"] = os.path.basename(path)
    return record
