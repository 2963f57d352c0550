"""Vendor variables filled at import for the active platform
(torch_fl._platform_env) and FLAGOS_USE_FLAGTREE's import-time check on
ascend (torch_fl.compile), tested on the host plugin by calling each step
with the platform's name."""

from __future__ import annotations

import pytest

from conftest import run_python

FILL = """
    import os, torch_fl
    from torch_fl import _platform_env
    written = _platform_env.fill({platform!r})
    print(repr(os.environ.get({name!r})), sorted(written))
"""


@pytest.mark.parametrize("platform,name,value", [
    ("ascend", "TRITON_ENABLE_TASKQUEUE", "0"),
    ("bpu", "HB_DNN_USER_DEFINED_L2M_SIZES", "6:6:6:6"),
])
def test_filled_on_its_platform_when_unset_and_an_export_wins(platform, name, value):
    out = run_python(FILL.format(platform=platform, name=name), check=True).stdout.strip()
    assert out == f"{value!r} [{name!r}]", out
    for exported in ("1", ""):  # an empty export is a choice too
        out = run_python(FILL.format(platform=platform, name=name), env={name: exported}, check=True)
        assert out.stdout.strip() == f"{exported!r} []", out.stdout


def test_other_platforms_fill_neither():
    out = run_python("""
        import os, torch_fl
        from torch_fl import _platform_env
        print([_platform_env.fill(p) for p in ("host", "gcu", "cuda", "musa", None)],
              os.environ.get("TRITON_ENABLE_TASKQUEUE"), os.environ.get("HB_DNN_USER_DEFINED_L2M_SIZES"))
    """, check=True).stdout.strip()
    assert out == "[{}, {}, {}, {}, {}] None None", out


def test_a_host_plugin_import_sets_neither():
    out = run_python("""
        import os, torch_fl
        print(os.environ.get("TRITON_ENABLE_TASKQUEUE"), os.environ.get("HB_DNN_USER_DEFINED_L2M_SIZES"))
    """, env={"FLAGOS_PLUGIN": "host"}, check=True).stdout.split()
    assert out == ["None", "None"], out


CHECK = """
    import torch_fl
    from torch_fl import compile
    try:
        compile.check_flagtree({platform!r})
        print("ok")
    except RuntimeError as e:
        print(e)
"""


def fake_triton(tmp_path, dist: str, version: str) -> dict[str, str]:
    """A `triton` package and its distribution record, as FlagTree or stock Triton ship them."""
    (tmp_path / "triton").mkdir(parents=True)
    (tmp_path / "triton" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    info = tmp_path / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    return {"PYTHONPATH": str(tmp_path)}


def test_use_flagtree_is_checked_at_import_on_ascend(tmp_path):
    on = {"FLAGOS_USE_FLAGTREE": "1"}
    out = run_python(CHECK.format(platform="ascend"), env=on, check=True).stdout.strip()
    assert out.startswith("[flagos] FLAGOS_USE_FLAGTREE=1, but") and "ascend" in out, out
    stock = fake_triton(tmp_path / "stock", "triton", "3.4.0")
    out = run_python(CHECK.format(platform="ascend"), env={**on, **stock}, check=True).stdout.strip()
    assert "is not FlagTree" in out and "3.4.0" in out, out
    flagtree = fake_triton(tmp_path / "flagtree", "flagtree", "3.3.0")
    assert run_python(CHECK.format(platform="ascend"), env={**on, **flagtree}, check=True).stdout.strip() == "ok"


def test_use_flagtree_off_or_elsewhere_is_not_checked_at_import():
    assert run_python(CHECK.format(platform="ascend"), check=True).stdout.strip() == "ok"
    # elsewhere the check runs at the first compile (test_compile.py)
    out = run_python(CHECK.format(platform="host"), env={"FLAGOS_USE_FLAGTREE": "1"}, check=True)
    assert out.stdout.strip() == "ok"
