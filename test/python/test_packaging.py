"""Every plugin exports exactly one dynamic symbol (DESIGN.md): nothing of a
vendor stack can collide with another's in one process."""

import glob
import subprocess
from pathlib import Path

import pytest

from conftest import run_python


def plugin_libraries(test_plugin_dir: Path) -> list[str]:
    proc = run_python("import torch_fl, json; print(json.dumps([c['path'] for c in torch_fl.installed_plugins()]))",
                      env={"FLAGOS_PLUGIN": "host"}, check=True)
    import json

    installed = json.loads(proc.stdout.strip().splitlines()[-1])
    fakes = [p for p in glob.glob(str(test_plugin_dir / "fake_*" / "*.so")) if "no_entry" not in p]
    return installed + fakes


def test_each_plugin_exports_exactly_the_entry_symbol(test_plugin_dir):
    libs = plugin_libraries(test_plugin_dir)
    assert any(p.endswith("libflagos_host.so") for p in libs)
    for lib in libs:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
        symbols = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
        assert symbols == ["flagos_plugin_get_api"], (lib, symbols)
