"""Every plugin exports exactly one dynamic symbol (docs/architecture.md, "Plugin ABI"): nothing of a
vendor stack can collide with another's in one process."""

import glob
import subprocess
from pathlib import Path

import pytest

from conftest import exported_symbols, run_python


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
        symbols = exported_symbols(lib)
        assert symbols == ["flagos_plugin_get_api"], (lib, symbols)


def test_the_core_shares_the_processs_libstdcxx():
    """The core must use the shared libstdc++ that torch uses. A copy of its
    own (a g++ that links libstdc++ statically) mixes two iostream and
    locale implementations in one process: the first number streamed into
    a c10 error message crashes."""
    proc = run_python("import torch_fl._C as c, os; print(os.path.join(os.path.dirname(c.__file__), 'lib'))",
                      env={"FLAGOS_PLUGIN": "host"}, check=True)
    libdir = proc.stdout.strip().splitlines()[-1]
    core = next(iter(glob.glob(libdir + "/libtorch_fl_core.so*")), None)
    assert core, f"no libtorch_fl_core.so in {libdir}"
    out = subprocess.run(["nm", "-D", "--defined-only", core], capture_output=True, text=True, check=True)
    own = [s for s in ("_ZNSt6locale7classicEv", "_ZNSt8ios_base4InitC1Ev") if s in out.stdout]
    assert not own, f"{core} defines libstdc++'s own {own}: it was linked with a static libstdc++"
