"""`import torch_fl` is all or nothing: a setting that cannot work fails the
import before anything is registered in torch, and a retry in the same
process reports the same cause."""

from __future__ import annotations

import json

import pytest

from conftest import flagos_lines, run_python

# Explicit `import torch_fl` after `import torch`: torch's backend autoload
# (which would import torch_fl inside `import torch`) is off; the last test
# covers it.
BASE = {"FLAGOS_PLUGIN": "host", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}

# Imports torch_fl twice; prints what each attempt raised, then what the
# failed attempts left in torch: the PrivateUse1 name, torch.flagos, routes.
RETRY = """
import json, sys
import torch
errors = []
for _ in range(2):
    try:
        import torch_fl
        errors.append(None)
    except RuntimeError as e:
        errors.append(str(e))
print(json.dumps({
    "errors": errors,
    "backend": torch._C._get_privateuse1_backend_name(),
    "torch_flagos": hasattr(torch, "flagos"),
    "routes": sys.modules["torch_fl._C"]._routes() is not None,
}))
"""


def retry(**env: str) -> dict:
    proc = run_python(RETRY, env={**BASE, **env}, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env, cause", [
    ({"FLAGOS_BACKEND_CONFIG": "/nonexistent/my.toml"}, "[flagos] routing conf /nonexistent/my.toml: no such file"),
    ({"FLAGOS_BACKEND_CONFIG": "relative.toml"},
     "[flagos] FLAGOS_BACKEND_CONFIG must be an absolute path, got 'relative.toml'"),
    ({"GEMS_VENDOR": "bogus"}, "[flagos] GEMS_VENDOR='bogus' is not a vendor torch_fl can configure"),
], ids=["missing-conf", "relative-conf", "gems-vendor"])
def test_a_failed_import_registers_nothing_and_a_retry_fails_the_same_way(env, cause):
    out = retry(**env)
    assert len(out["errors"]) == 2 and out["errors"][0] == out["errors"][1]
    assert out["errors"][0].startswith(cause)
    assert out == {"errors": out["errors"], "backend": "privateuseone", "torch_flagos": False, "routes": False}


def test_a_bad_conf_is_refused_before_the_device_is_registered(tmp_path):
    conf = tmp_path / "bad.toml"
    conf.write_text('[routes]\n"add.Tensr" = "cpu"\n')
    out = retry(FLAGOS_BACKEND_CONFIG=str(conf))
    assert out["errors"][0] == out["errors"][1]
    assert out["errors"][0].startswith(f"[flagos] routing conf {conf}:2: 'add.Tensr': no such operator")
    assert (out["backend"], out["torch_flagos"], out["routes"]) == ("privateuseone", False, False)


def test_an_import_retried_after_fixing_the_cause_succeeds(tmp_path):
    proc = run_python("""
        import os, torch
        try:
            import torch_fl
        except RuntimeError as e:
            print(e)
        del os.environ["GEMS_VENDOR"]
        import torch_fl
        x = torch.ones(3, device="flagos")
        print((x + x).cpu().tolist(), torch_fl.backend_config_path().endswith("host.toml"))
    """, env={**BASE, "GEMS_VENDOR": "bogus"}, check=True)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("[flagos] GEMS_VENDOR='bogus'")
    assert lines[1] == "[2.0, 2.0, 2.0] True"
    assert flagos_lines(proc.stderr) == []


def test_installing_the_same_conf_again_is_a_no_op():
    proc = run_python("""
        import torch_fl
        from torch_fl import _C, _routing
        conf = torch_fl.backend_config_path()
        again = _C._install_routes(conf, _routing.catalog_options())
        print(again["conf"] == conf, len(again["routes"]) == len(torch_fl.routes()))
        try:
            _C._install_routes(conf.replace("host.toml", "default.toml"), _routing.catalog_options())
        except RuntimeError as e:
            print(e)
    """, env=BASE, check=True)
    lines = proc.stdout.splitlines()
    assert lines[0] == "True True"
    assert lines[1].startswith("[flagos] routes are already installed from ")
    assert lines[1].endswith("default.toml in the same process")


# -- settings certain to fail fail the import ---------------------------------------


def test_forcing_flaggems_where_flag_gems_cannot_run_fails_the_import(tmp_path):
    # An empty directory first on the path hides any installed flag_gems.
    (tmp_path / "flag_gems").mkdir()
    (tmp_path / "flag_gems" / "__init__.py").write_text("raise ImportError('no flag_gems here')\n")
    out = retry(FLAGOS_FORCE_BACKEND="FlagGems", PYTHONPATH=str(tmp_path))
    # Neither its Python layer nor its C++ runtime (flaggems_cpp) can serve.
    assert out["errors"][0] == out["errors"][1]
    assert out["errors"][0].startswith(
        "[flagos] FLAGOS_FORCE_BACKEND=flaggems, but FlagGems cannot run here: "
        "flag_gems is not installed (no flag_gems here); its C++ runtime: "), out["errors"][0]
    assert (out["backend"], out["torch_flagos"], out["routes"]) == ("privateuseone", False, False)
    out = retry(FLAGOS_FORCE_BACKEND="flaggems", FLAGOS_DISABLE_FLAGGEMS_PY="1", FLAGGEMS_DIR="/nonexistent")
    assert out["errors"][0] == ("[flagos] FLAGOS_FORCE_BACKEND=flaggems, but FlagGems cannot run here: "
                                "FLAGOS_DISABLE_FLAGGEMS_PY=1 leaves the FlagGems Python layer unregistered; "
                                "its C++ runtime: FLAGGEMS_DIR=/nonexistent holds no FlagGemsConfig.cmake")


def test_with_autoload_a_failing_import_fails_import_torch_with_the_cause():
    proc = run_python("import torch", env={"FLAGOS_PLUGIN": "host", "TORCH_DEVICE_BACKEND_AUTOLOAD": "1",
                                           "FLAGOS_BACKEND_CONFIG": "/nonexistent/my.toml"})
    assert proc.returncode != 0
    assert "[flagos] routing conf /nonexistent/my.toml: no such file" in proc.stderr
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in proc.stderr.splitlines()[-1]  # torch's own hint
    ok = run_python("import torch; print(torch.flagos.device_count() > 0)",
                    env={"FLAGOS_PLUGIN": "host", "TORCH_DEVICE_BACKEND_AUTOLOAD": "1"}, check=True)
    assert ok.stdout.split() == ["True"]  # import torch alone made flagos available
