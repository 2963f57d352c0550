"""How `import torch_fl` picks its plugin (docs/architecture.md, "Loader"): explicit
FLAGOS_PLUGIN fails loudly with the real cause; implicitly found plugins that
fail warn once and are skipped; the host plugin is the announced fallback."""

from conftest import flagos_lines, run_python

SHOW = "import torch_fl, json; print(json.dumps(torch_fl.plugin_info()))"


def info(proc):
    import json

    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_host_plugin_is_the_fallback_with_one_info_line(host_fallback_line):
    proc = run_python(SHOW)
    assert info(proc)["name"] == "host"
    assert info(proc)["abi"] == "1.0"
    assert flagos_lines(proc.stderr) == [host_fallback_line()]


def test_explicit_host_by_name_is_silent():
    proc = run_python(SHOW, env={"FLAGOS_PLUGIN": "host"})
    assert info(proc)["origin"] == "explicit"
    assert flagos_lines(proc.stderr) == []


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
    assert "built for plugin ABI 2.0, this torch_fl speaks ABI 1.0" in proc.stdout
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
                                                            host_fallback_line):
    env = entry_point_plugin("brokenaccel", fake_plugin("wrong_major"))
    proc = run_python(SHOW, env=env)
    assert info(proc)["name"] == "host"
    lines = flagos_lines(proc.stderr)
    assert len(lines) == 2, lines
    assert lines[0].startswith("[flagos] plugin 'brokenaccel'") and lines[0].endswith("; skipping it")
    assert lines[1] == host_fallback_line("brokenaccel: failed to load")


def test_plugin_wheel_without_devices_is_passed_over(fake_plugin, entry_point_plugin, host_fallback_line):
    env = entry_point_plugin("idleaccel", fake_plugin("ok"))
    proc = run_python(SHOW, env=env)
    assert info(proc)["name"] == "host"
    assert flagos_lines(proc.stderr) == [host_fallback_line("idleaccel: 0 devices")]


def test_plugin_wheel_can_be_selected_by_name(fake_plugin, entry_point_plugin):
    env = entry_point_plugin("idleaccel", fake_plugin("ok"))
    env["FLAGOS_PLUGIN"] = "idleaccel"
    proc = run_python(SHOW, env=env)
    assert info(proc)["name"] == "idleaccel"
    assert info(proc)["device_count"] == 0


def test_cli_works_even_when_the_configured_plugin_is_broken(fake_plugin):
    proc = run_python("", args=["-m", "torch_fl", "plugins"],
                      env={"FLAGOS_PLUGIN": fake_plugin("wrong_major")})
    assert proc.returncode == 0, proc.stderr
    assert "host" in [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
