"""FLAGOS_ALIAS_CUDA and the torch.cuda shim (docs/compat.md), on whatever
plugin is active (the host plugin in CI). Each switch acts at import, so each
setting runs in its own interpreter; the script below reports what a CUDA
script would see there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_fl  # noqa: F401

PROBE = textwrap.dedent(r"""
    import io, json, sys
    import torch
    import torch_fl

    def default_device(device, make):
        torch.set_default_device(device)
        try:
            return make()
        finally:
            torch.set_default_device(None)

    def within(device, make):
        with device:
            return make()

    def device_of(make):
        try:
            return str(make().device)
        except Exception as e:
            return "error: " + str(e).splitlines()[0][:120]

    out = {"installed": torch_fl.compat.installed()}
    out["cuda_available"] = torch.cuda.is_available()
    if "--devices" in sys.argv:
        model = torch.nn.Linear(4, 2)
        out["devices"] = {
            "torch.device": device_of(lambda: torch.ones(2).to(torch.device("cuda"))),
            "torch.device(type, index)": device_of(lambda: torch.empty(2, device=torch.device("cuda", 0))),
            "cuda:0 string": device_of(lambda: torch.randn(2, device="cuda:0")),
            "tensor.cuda()": device_of(lambda: torch.ones(2).cuda()),
            "tensor.cuda(0)": device_of(lambda: torch.ones(2).cuda(0)),
            ".to(cuda)": device_of(lambda: torch.ones(2).to("cuda")),
            ".to(device=torch.device)": device_of(lambda: torch.ones(2).to(device=torch.device("cuda"))),
            "factory": device_of(lambda: torch.zeros(3, device="cuda")),
            "arange": device_of(lambda: torch.arange(3, device=torch.device("cuda"))),
            "new_zeros": device_of(lambda: torch.ones(2).new_zeros(3, device="cuda")),
            "module.cuda()": device_of(lambda: model.cuda().weight),
            "module.to(cuda)": device_of(lambda: model.to("cuda").bias),
            "set_default_device(cuda)": device_of(lambda: default_device("cuda", lambda: torch.zeros(2))),
            "with torch.device(cuda)": device_of(lambda: within(torch.device("cuda"), lambda: torch.ones(2))),
        }
        # Default devices that are not cuda still reach the wrapped factories.
        out["default devices"] = {
            "meta": device_of(lambda: default_device("meta", lambda: torch.randn(2))),
            "with meta": device_of(lambda: within(torch.device("meta"), lambda: torch.nn.Linear(2, 2).weight)),
            "with flagos:1": device_of(lambda: within(torch.device("flagos:1"), lambda: torch.arange(2))),
        }
    if "--devices" in sys.argv and "cuda_alias" in out["installed"]:
        model = torch.nn.Linear(4, 2)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = model.cuda()(torch.randn(3, 4, device="cuda"))
        out["autocast"] = [str(y.dtype), str(y.device)]
        out["grad_scaler"] = str(torch.amp.GradScaler()._device)
        out["device object"] = str(torch.device("cuda"))
        saved = io.BytesIO()
        torch.save({"w": torch.ones(2)}, saved)
        saved.seek(0)
        out["map_location"] = str(torch.load(saved, map_location="cuda")["w"].device)
        out["is_cuda"] = torch.ones(2, device="cuda").is_cuda
    if "--queries" in sys.argv:
        torch.cuda.manual_seed(7)
        a = torch.cuda.initial_seed()
        x = torch.empty(1 << 20, device="flagos")
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            assert torch.cuda.current_stream() == s
        e = torch.cuda.Event()
        e.record()
        torch.cuda.synchronize("cuda:0")
        with torch.cuda.device("cuda:0"):
            current = torch.cuda.current_device()
        out["queries"] = {
            "device_count": torch.cuda.device_count() == torch.flagos.device_count(),
            "current_device": current,
            "name": torch.cuda.get_device_name("cuda:0") == torch.flagos.get_device_name(0),
            "capability": list(torch.cuda.get_device_capability()) == list(torch.flagos.get_device_capability()),
            "properties": torch.cuda.get_device_properties(0).total_memory == torch.flagos.get_device_properties(0).total_memory,
            "memory_allocated": torch.cuda.memory_allocated() >= 4 << 20,
            "max_memory_allocated": torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated(),
            "summary": "flagos" in torch.cuda.memory_summary() or "Allocated" in torch.cuda.memory_summary(),
            "seed": a == 7 and torch.flagos.initial_seed() == 7,
            "stream_type": type(s).__module__.startswith("torch_fl"),
            "empty_cache": torch.cuda.empty_cache() is None,
            "memory_fraction": (torch.cuda.set_per_process_memory_fraction(0.75, "cuda:0") is None
                                and torch.flagos.get_per_process_memory_fraction(0) == 0.75
                                and torch.cuda.get_per_process_memory_fraction("cuda:0") == 0.75),
        }
    print(json.dumps(out))
""")


def _probe(*flags: str, **env: str) -> dict:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    child_env.update(env)
    got = subprocess.run([sys.executable, "-c", PROBE, *flags], capture_output=True, text=True, env=child_env,
                         timeout=120)
    assert got.returncode == 0, got.stderr[-3000:]
    return json.loads(got.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def aliased():
    return _probe("--devices", "--queries")


def test_alias_is_on_by_default_with_the_shim(aliased):
    assert {"cuda_alias", "cuda_shim"} <= set(aliased["installed"])
    assert aliased["cuda_available"] is True


@pytest.mark.parametrize("entry", [
    "torch.device", "torch.device(type, index)", "cuda:0 string", "tensor.cuda()", "tensor.cuda(0)", ".to(cuda)",
    ".to(device=torch.device)", "factory", "arange", "new_zeros", "module.cuda()", "module.to(cuda)",
    "set_default_device(cuda)", "with torch.device(cuda)"])
def test_cuda_means_flagos_at_each_entry_point(aliased, entry):
    assert aliased["devices"][entry] in ("flagos", "flagos:0")


def test_default_device_contexts_see_through_the_wrapped_factories(aliased):
    assert aliased["default devices"] == {"meta": "meta", "with meta": "meta", "with flagos:1": "flagos:1"}


@pytest.mark.skipif(hasattr(torch._C, "_nvtx"), reason="this torch has NVTX: torch.cuda.nvtx stays torch's")
def test_nvtx_ranges_become_profiler_ranges_without_a_cuda_build():
    code = textwrap.dedent("""
        import torch, torch_fl
        with torch.profiler.profile() as prof:
            torch.cuda.nvtx.range_push("phase-a")
            x = torch.ones(4, device="cuda") * 2
            torch.cuda.nvtx.range_pop()
            with torch.cuda.nvtx.range("phase-{}", "b"):
                x = x + 1
            handle = torch.cuda.nvtx.range_start("phase-c")
            torch.cuda.nvtx.range_end(handle)
            torch.cuda.nvtx.mark("tick")
        print(sorted(e.key for e in prof.key_averages() if e.key.startswith(("phase", "tick"))))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout.strip().splitlines()[-1] == "['phase-a', 'phase-b', 'phase-c', 'tick']"


def test_torch_compile_applies_the_default_device_to_wrapped_factories():
    # Dynamo hands the default device's mode the wrapper it traced through.
    code = textwrap.dedent("""
        import torch, torch_fl
        torch.set_default_device("flagos")

        @torch.compile(fullgraph=True)
        def scaled(n):
            return torch.ones(3) * n

        print(torch_fl.compat.installed(), scaled(torch.tensor(2.0)).tolist(), torch.ones(1).device)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    assert "'cuda_alias'" in got.stdout and got.stdout.strip().endswith("[2.0, 2.0, 2.0] flagos:0")


def test_cuda_means_flagos_inside_compiled_code_too():
    code = textwrap.dedent("""
        import torch, torch_fl

        @torch.compile(fullgraph=True)
        def step(x):
            y = x.to("cuda") + torch.zeros(x.shape, device="cuda") + torch.arange(4, device=torch.device("cuda", 0))
            return y.new_ones(2, device="cuda").sum() + y

        out = step(torch.ones(4))
        print(out.device, out.tolist())
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout.strip().splitlines()[-1] == "flagos:0 [3.0, 4.0, 5.0, 6.0]"


def test_torchscript_compiles_calls_to_the_wrapped_factories(tmp_path):
    # TorchScript reads a function's source (so a file, not -c) and must take
    # a wrapped factory for the aten op it wraps.
    script = tmp_path / "scripted.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch_fl

        @torch.jit.script
        def scripted(x):
            return x + torch.zeros(2, device=x.device) + torch.arange(2, device=x.device)

        print(torch_fl.compat.installed(), scripted(torch.ones(2, device="flagos")).tolist())
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stderr[-3000:]
    assert "'cuda_alias'" in got.stdout and got.stdout.strip().endswith("[1.0, 2.0]")


def test_amp_and_loading_follow_the_alias(aliased):
    assert aliased["autocast"] == ["torch.bfloat16", "flagos:0"]
    assert aliased["grad_scaler"] == "flagos"
    assert aliased["map_location"] == "flagos:0"
    # Documented limits: torch's own types stay as they are.
    assert aliased["device object"] == "cuda"
    assert aliased["is_cuda"] is False


def test_torch_cuda_answers_from_flagos(aliased):
    assert aliased["queries"] == {k: (0 if k == "current_device" else True) for k in aliased["queries"]}


def test_alias_off_leaves_cuda_strings_to_torch():
    got = _probe("--devices", FLAGOS_ALIAS_CUDA="0")
    assert "cuda_alias" not in got["installed"]
    if not torch.backends.cuda.is_built():  # a CPU torch: cuda is torch's, and absent
        assert got["devices"]["factory"].startswith("error:")
        assert "cuda_shim" in got["installed"]  # no native CUDA: the shim still answers


def test_disable_cuda_shim_keeps_torch_cuda_native():
    got = _probe(FLAGOS_DISABLE_CUDA_SHIM="1")
    assert "cuda_shim" not in got["installed"] and "cuda_alias" in got["installed"]
    assert got["cuda_available"] is torch_fl.compat.native_cuda()  # torch's own answer


def test_checkpoint_saved_on_cuda_loads_onto_flagos(tmp_path):
    """A storage tagged "cuda:0" (as torch.save writes for CUDA tensors) comes
    back on flagos with no map_location."""
    path = tmp_path / "ckpt.pt"
    tag = lambda obj: "cuda:0" if getattr(obj, "device", None) is not None and obj.device.type == "cpu" else None  # noqa: E731
    torch.serialization.register_package(1, tag, lambda obj, location: None)
    try:
        torch.save({"w": torch.arange(3.0)}, path)
    finally:
        torch.serialization._package_registry[:] = [
            entry for entry in torch.serialization._package_registry if entry[1] is not tag]
    script = f"import torch, torch_fl; print(torch.load({str(path)!r})['w'].device)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.strip().splitlines()[-1] == "flagos:0"


def test_torch_cuda_own_functions_initialise_cuda_past_the_shim(monkeypatch):
    """torch.cuda's own functions find the shim's is_initialized() among their
    module's globals; native() runs torch's lazy init with torch's own answer
    put back, once, so that they work (get_device_properties did not)."""
    from torch_fl.compat import cuda_shim

    def torch_is_initialized():
        return False

    seen = []

    def lazy_init():
        seen.append(torch.cuda.is_initialized)
        torch.cuda._initialized = True

    monkeypatch.setitem(cuda_shim._replaced, "is_initialized", torch_is_initialized)
    monkeypatch.setitem(cuda_shim._replaced, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "_initialized", False)
    monkeypatch.setattr(torch.cuda, "_lazy_init", lazy_init)
    answering = torch.cuda.is_initialized
    cuda_shim.native("get_device_properties")
    cuda_shim.native("get_device_capability")
    assert seen == [torch_is_initialized]
    assert torch.cuda.is_initialized is answering
