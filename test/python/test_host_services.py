"""The core's services to plugins (flagos_host_services_t, ABI 1.6) as a
plugin uses them: the host plugin's mm kernel takes its accumulator as a
workspace from the core's caching allocator, and plugin options the plugin
does not know are reported through the core's log."""

from __future__ import annotations

import json

import pytest

from conftest import flagos_lines, run_python

MM = """
    import json, torch, torch_fl
    a = torch.randn(48, 32, dtype=torch.float64)
    b = torch.randn(32, 40, dtype=torch.float64)
    x, y = a.to("flagos"), b.to("flagos")

    def delta(make):
        torch.flagos.synchronize()
        before = torch.flagos.memory_stats()
        kept = make()
        torch.flagos.synchronize()
        after = torch.flagos.memory_stats()
        return kept, {k: after[k] - before[k] for k in ("allocation.all.allocated", "allocated_bytes.all.current")}

    out, mm = delta(lambda: torch.mm(x, y))
    _, empty = delta(lambda: torch.empty(48, 40, dtype=torch.float64, device="flagos"))
    print(json.dumps({"close": torch.allclose(out.cpu(), a @ b), "mm": mm, "empty": empty}))
"""


@pytest.mark.parametrize("strict", ["0", "1"])
def test_a_native_kernel_takes_its_workspace_from_the_core_allocator(strict):
    proc = run_python(MM, env={"FLAGOS_PLUGIN": "host", "FLAGOS_OP_mm": "native",
                               "FLAGOS_PLUGIN_OPTIONS": f"strict={strict}"}, check=True)
    out = json.loads(proc.stdout)
    assert out["close"]
    # Two blocks for the mm: its output, and the 48 x 40 double accumulator
    # the kernel asked the core for; the accumulator is back by the time the
    # stream ran, so the mm holds what a bare 48 x 40 tensor holds.
    assert out["mm"]["allocation.all.allocated"] == 2, out
    assert out["empty"]["allocation.all.allocated"] == 1, out
    assert out["mm"]["allocated_bytes.all.current"] == out["empty"]["allocated_bytes.all.current"], out


def test_a_workspace_the_core_cannot_lend_declines_to_the_next_route():
    """64 MiB of device memory: the 40 MiB output fits, the 40 MiB accumulator
    beside it does not, so the native kernel declines and the `cpu` route
    (no accumulator) computes the product."""
    proc = run_python("""
        import json, torch, torch_fl
        a, b = torch.randn(2560, 8, dtype=torch.float64), torch.randn(8, 2048, dtype=torch.float64)
        x, y = a.to("flagos"), b.to("flagos")
        close = [torch.allclose(torch.mm(x, y).cpu(), a @ b) for _ in range(3)]
        print(json.dumps({"close": all(close), "route": torch_fl.routes("mm")[0]["route"]}))
    """, env={"FLAGOS_PLUGIN": "host", "FLAGOS_OP_mm": "native", "FLAGOS_PLUGIN_OPTIONS": "memory_mb=64"},
        check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"close": True, "route": "native"}
    # The core says why once; the later declines of the loop are silent.
    lines = flagos_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("[flagos] plugin host: host service workspace_alloc: out of "
                                                   "memory on host device 0"), lines
    assert lines[0].endswith("(later out-of-memory failures are not logged)")


def test_an_option_the_plugin_does_not_know_is_reported_through_the_core():
    proc = run_python("import torch, torch_fl; torch.zeros(1, device='flagos')",
                      env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strcit=1,devices=2"}, check=True)
    assert flagos_lines(proc.stderr) == [
        "[flagos] plugin host: option 'strcit' is not one of this plugin's (devices, strict, memory_mb, "
        "collectives, graphs, profiler, ipc): ignored"], proc.stderr


def test_known_options_log_nothing():
    proc = run_python("import torch, torch_fl; torch.zeros(1, device='flagos')",
                      env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "devices=2,memory_mb=64"}, check=True)
    assert flagos_lines(proc.stderr) == [], proc.stderr


def test_plugins_probed_but_not_selected_keep_their_lines(built_accelerators):
    # Options meant for the host plugin: an accelerator plugin that is loaded
    # only to count its (zero) devices has nothing to tell the user.
    if not built_accelerators:
        pytest.skip("no accelerator plugin in this build to probe")
    env = {"FLAGOS_PLUGIN_OPTIONS": "memory_mb=64"}
    proc = run_python("import torch, torch_fl; print(torch_fl.plugin_info()['name'])", env=env, check=True)
    assert proc.stdout.split()[-1] == "host" and flagos_lines(proc.stderr) == [], proc.stderr
    proc = run_python("import torch, torch_fl", env={**env, "FLAGOS_LOG": "plugin"}, check=True)
    held = [line for line in flagos_lines(proc.stderr) if line.endswith("(while probed; not selected)")]
    assert any(f"plugin {name}: option 'memory_mb' is not one of this plugin's" in line
               for line in held for name in built_accelerators), proc.stderr
