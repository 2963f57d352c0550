"""How `import torch_fl` picks its plugin (docs/architecture.md, "Loader"): explicit
FLAGOS_PLUGIN fails loudly with the real cause; implicitly found plugins that
fail warn once and are skipped; the host plugin is the announced fallback."""

import json
import re
import subprocess
import sys

from conftest import _clean_env, flagos_lines, run_python

SHOW = "import torch_fl, json; print(json.dumps(torch_fl.plugin_info()))"


def info(proc):
    import json

    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_host_plugin_is_the_fallback_said_under_flagos_log_plugin(host_fallback_reason):
    # The usual case on a machine without accelerators: silent by default.
    proc = run_python(SHOW)
    assert info(proc)["name"] == "host"
    assert info(proc)["abi"] == "1.7"
    assert info(proc)["selection"] == host_fallback_reason()
    assert flagos_lines(proc.stderr) == []
    proc = run_python(SHOW, env={"FLAGOS_LOG": "plugin"})
    assert flagos_lines(proc.stderr) == ["[flagos] plugin: " + host_fallback_reason()]
    proc = run_python("", args=["-m", "torch_fl", "info"])
    assert json.loads(proc.stdout)["selection"] == host_fallback_reason()


def test_explicit_host_by_name_is_silent():
    proc = run_python(SHOW, env={"FLAGOS_PLUGIN": "host"})
    assert info(proc)["origin"] == "explicit"
    assert info(proc)["selection"] == "FLAGOS_PLUGIN=host"
    assert flagos_lines(proc.stderr) == []


def test_plugin_names_are_matched_in_any_case():
    proc = run_python(SHOW, env={"FLAGOS_PLUGIN": "HOST"})
    assert (info(proc)["name"], info(proc)["origin"]) == ("host", "explicit")


def test_a_bare_library_name_is_never_loaded_from_the_current_directory(tmp_path, fake_plugin):
    # A library of that name in the working directory is not what runs.
    (tmp_path / "libflagos_host.so").symlink_to(fake_plugin("wrong_major"))
    code = "import torch_fl, json; print(json.dumps(torch_fl.plugin_info()))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={**_clean_env(None), "FLAGOS_PLUGIN": "libflagos_host.so"}, timeout=300)
    installed = run_python("import torch_fl, json; print(json.dumps(torch_fl.plugin_info()['path']))",
                           env={"FLAGOS_PLUGIN": "host"}, check=True)
    assert info(proc)["path"] == json.loads(installed.stdout.splitlines()[-1])
    # A path says so with a '/': then the working directory's file is loaded.
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={**_clean_env(None), "FLAGOS_PLUGIN": "./libflagos_host.so"}, timeout=300)
    assert "built for plugin ABI 2." in proc.stderr
    proc = run_python("import torch_fl", env={"FLAGOS_PLUGIN": "libflagos_nosuch.so"})
    assert proc.stderr.splitlines()[-1].startswith(
        "RuntimeError: [flagos] FLAGOS_PLUGIN=libflagos_nosuch.so: no plugin of that name is installed")
    assert proc.stderr.splitlines()[-1].endswith(
        "or give a path to libflagos_nosuch.so (./libflagos_nosuch.so for the current directory)")


def test_a_bad_plugin_option_names_the_option_and_its_value():
    proc = run_python("import torch_fl", env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "memory_mb=abc"})
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[-1].endswith(
        "its entry point failed with INVALID_ARGUMENT: flagos_plugin_get_api: option memory_mb=abc "
        "is not an integer in [0, 17592186044415]")


def test_plugin_options_reach_the_plugin():
    proc = run_python(SHOW, env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "devices=3"})
    assert info(proc)["device_count"] == 3
    assert info(proc)["options"] == {"devices": "3"}


def test_explicit_plugin_of_wrong_major_fails_the_import_with_the_cause(fake_plugin):
    code = """
        try:
            import torch_fl
        except RuntimeError as exc:
            print("caught:", exc)
        import json
        print("process still usable:", json.dumps({"ok": 1}))
    """
    proc = run_python(code, env={"FLAGOS_PLUGIN": fake_plugin("wrong_major")})
    assert proc.returncode == 0, proc.stderr
    assert "caught: [flagos] plugin 'fake_wrong_major'" in proc.stdout
    assert re.search(r"built for plugin ABI 2\.(\d+), this torch_fl speaks ABI 1\.\1;", proc.stdout)
    assert "process still usable" in proc.stdout


def test_explicit_plugin_with_missing_runtime_names_the_library(fake_plugin):
    proc = run_python("import torch_fl", env={"FLAGOS_PLUGIN": fake_plugin("missing_dep")})
    assert proc.returncode != 0
    assert "libfake_vendor_runtime.so: cannot open shared object file" in proc.stderr


def test_unknown_plugin_name_lists_what_is_installed(built_accelerators):
    proc = run_python("import torch_fl", env={"FLAGOS_PLUGIN": "nosuchvendor"})
    assert proc.returncode != 0
    found = ", ".join(sorted(built_accelerators + ["host"]))
    assert f"FLAGOS_PLUGIN=nosuchvendor: no plugin of that name is installed (found: {found})" in proc.stderr


def test_broken_plugin_wheel_warns_once_and_host_takes_over(fake_plugin, entry_point_plugin,
                                                            host_fallback_reason):
    env = entry_point_plugin("brokenaccel", fake_plugin("wrong_major"))
    proc = run_python(SHOW, env=env)
    assert info(proc)["name"] == "host"
    assert info(proc)["selection"] == host_fallback_reason("brokenaccel: failed to load")
    lines = flagos_lines(proc.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("[flagos] plugin 'brokenaccel'") and lines[0].endswith("; skipping it")


def test_plugin_wheel_without_devices_is_passed_over(fake_plugin, entry_point_plugin, host_fallback_reason):
    env = entry_point_plugin("idleaccel", fake_plugin("ok"))
    proc = run_python(SHOW, env=env)
    assert info(proc)["name"] == "host"
    assert info(proc)["selection"] == host_fallback_reason("idleaccel: 0 devices")
    assert flagos_lines(proc.stderr) == []


def test_plugin_wheel_can_be_selected_by_name(fake_plugin, entry_point_plugin):
    env = entry_point_plugin("idleaccel", fake_plugin("ok"))
    env["FLAGOS_PLUGIN"] = "idleaccel"
    proc = run_python("", args=["-m", "torch_fl", "info"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert (json.loads(proc.stdout)["name"], json.loads(proc.stdout)["device_count"]) == ("idleaccel", 0)


def test_explicit_plugin_without_devices_fails_the_import(fake_plugin, entry_point_plugin):
    env = entry_point_plugin("idleaccel", fake_plugin("ok"))
    env["FLAGOS_PLUGIN"] = "idleaccel"
    proc = run_python("import torch_fl", env=env)
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[-1] == (
        f"RuntimeError: [flagos] FLAGOS_PLUGIN=idleaccel: plugin 'idleaccel' ({fake_plugin('ok')}) reports "
        "0 devices; unset FLAGOS_PLUGIN to use the host plugin (`python -m torch_fl info` describes the plugin)")


def test_cli_works_even_when_the_configured_plugin_is_broken(fake_plugin):
    proc = run_python("", args=["-m", "torch_fl", "plugins"],
                      env={"FLAGOS_PLUGIN": fake_plugin("wrong_major")})
    assert proc.returncode == 0, proc.stderr
    assert "host" in [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
