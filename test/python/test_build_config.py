"""The build switches and the build record (docs/environment-variables.md,
"Build switches"; docs/architecture.md, "Build record"). The configuration logic
(tools/build_config) is tested directly, with crafted environments and no
rebuild; the last tests check the record the real build installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import importlib  # noqa: E402

# The submodule (tools/build_config/resolve.py); the package re-exports the
# function resolve() under the same name.
rc = importlib.import_module("tools.build_config.resolve")
from tools.build_config import BuildConfigError, resolve  # noqa: E402

from conftest import flagos_lines, run_python  # noqa: E402

PLATFORMS = rc.load_platforms()


def cfg(**env: str) -> rc.Resolved:
    return resolve(env, cpu_count=7, version="2.10.0")


def refused(**env: str) -> str:
    with pytest.raises(BuildConfigError) as info:
        cfg(**env)
    message = str(info.value)
    assert message.startswith("[flagos] ") and "\n" not in message
    return message


# -- FLAGOS_ACCELERATOR ------------------------------------------------------

def test_accelerator_defaults_to_cuda_and_empty_means_unset():
    assert cfg().accelerator == "cuda"
    assert cfg(FLAGOS_ACCELERATOR="").accelerator == "cuda"


@pytest.mark.parametrize("accelerator", rc.ACCELERATORS)
def test_every_spec_accelerator_is_accepted(accelerator):
    assert cfg(FLAGOS_ACCELERATOR=accelerator).accelerator == accelerator
    assert cfg(FLAGOS_ACCELERATOR=accelerator.upper()).accelerator == accelerator


def test_platform_table_covers_exactly_the_spec_accelerators():
    assert sorted(PLATFORMS) == sorted(rc.ACCELERATORS)


@pytest.mark.parametrize("value", ["foo", "host", "nvidia", "cuda,ppu", "xpu"])
def test_unknown_accelerator_is_refused_listing_the_valid_ones(value):
    message = refused(FLAGOS_ACCELERATOR=value)
    assert f"FLAGOS_ACCELERATOR={value}" in message
    assert "cuda, ppu, metax, ascend, tsingmicro, dcu, gcu, musa, bpu" in message


# -- the five kernel-set switches ---------------------------------------------

@pytest.mark.parametrize("accelerator", rc.ACCELERATORS)
def test_defaults_follow_the_platform_table(accelerator):
    got = cfg(FLAGOS_ACCELERATOR=accelerator).switches()
    assert got == PLATFORMS[accelerator]["defaults"]


FORCED = [(a, name, value) for a, p in PLATFORMS.items() for name, value in p["forced"].items()]


def test_the_forced_values_are_the_specs():
    assert sorted(FORCED) == sorted([("tsingmicro", "FLAGOS_BUILD_VENDOR", True),
                                     ("dcu", "FLAGOS_BUILD_FLAGGEMS_CPP", False),
                                     ("musa", "FLAGOS_BUILD_FLAGGEMS_CPP", False),
                                     ("bpu", "FLAGOS_BUILD_FLAGGEMS_CPP", False)])


@pytest.mark.parametrize("accelerator,name,forced", FORCED)
def test_a_contradicting_explicit_value_is_refused_naming_both(accelerator, name, forced):
    explicit = "off" if forced else "ON"
    message = refused(FLAGOS_ACCELERATOR=accelerator, **{name: explicit})
    assert f"{name}={explicit}" in message  # the variable's value
    assert f"pinned {'ON' if forced else 'OFF'} on {accelerator}" in message  # the forced one


@pytest.mark.parametrize("accelerator,name,forced", FORCED)
def test_an_agreeing_explicit_value_is_accepted(accelerator, name, forced):
    r = cfg(FLAGOS_ACCELERATOR=accelerator, **{name: "yes" if forced else "no"})
    assert r.switches()[name] is forced
    assert r.sources[name] == "environment"
    assert cfg(FLAGOS_ACCELERATOR=accelerator).sources[name] == "forced"


def test_unforced_switches_take_the_explicit_value():
    assert cfg(FLAGOS_ACCELERATOR="metax", FLAGOS_BUILD_VENDOR="1").kernels["vendor"] is True
    # tsingmicro defaults FLAGGEMS_CPP off but does not pin it (the spec's words).
    assert cfg(FLAGOS_ACCELERATOR="tsingmicro", FLAGOS_BUILD_FLAGGEMS_CPP="on").kernels["flaggems_cpp"]
    assert cfg(FLAGOS_BUILD_BOXING="TRUE").kernels["boxing"] is True
    assert cfg(FLAGOS_BUILD_TILEOPS="No").kernels["tileops"] is False


@pytest.mark.parametrize("text,value", [(t, True) for t in ("1", "true", "on", "yes", "TRUE", "On", "YeS")]
                         + [(t, False) for t in ("0", "false", "off", "no", "FALSE", "Off", "NO")])
def test_boolean_spellings(text, value):
    assert cfg(FLAGOS_BUILD_BOXING=text).kernels["boxing"] is value
    assert cfg(FLAGOS_BUILD_BOXING=text).warnings == cfg().warnings


def test_empty_switch_is_the_default_not_off():
    r = cfg(FLAGOS_BUILD_TILEOPS="", FLAGOS_BUILD_VENDOR="")
    assert r.kernels["tileops"] is True and r.kernels["vendor"] is True
    assert r.sources["FLAGOS_BUILD_TILEOPS"] == "default"
    # Empty is unset on a pinned platform too: no contradiction.
    assert cfg(FLAGOS_ACCELERATOR="dcu", FLAGOS_BUILD_FLAGGEMS_CPP="").kernels["flaggems_cpp"] is False


def test_a_non_boolean_warns_once_and_uses_the_default():
    base = cfg().warnings
    r = cfg(FLAGOS_BUILD_TILEOPS="2")
    assert r.kernels["tileops"] is True
    extra = [w for w in r.warnings if w not in base]
    assert len(extra) == 1 and extra[0].startswith("[flagos] FLAGOS_BUILD_TILEOPS='2'")
    # ... and is not a contradiction of a forced value either.
    assert cfg(FLAGOS_ACCELERATOR="bpu", FLAGOS_BUILD_FLAGGEMS_CPP="maybe").kernels["flaggems_cpp"] is False


def test_a_cmake_define_contradicting_the_environment_is_refused():
    with pytest.raises(BuildConfigError, match=r"FLAGOS_BUILD_BOXING=1 in the environment "
                                               r"contradicts -DFLAGOS_BUILD_BOXING=OFF"):
        resolve({"FLAGOS_BUILD_BOXING": "1"}, defines={"FLAGOS_BUILD_BOXING": "OFF"})
    r = resolve({"FLAGOS_BUILD_BOXING": "on"}, defines={"FLAGOS_BUILD_BOXING": "ON"})
    assert r.kernels["boxing"] is True
    r = resolve({}, defines={"FLAGOS_ACCELERATOR": "musa"})
    assert (r.accelerator, r.sources["FLAGOS_ACCELERATOR"]) == ("musa", "cmake")
    with pytest.raises(BuildConfigError, match="FLAGOS_BUILD_FLAGGEMS_CPP=ON contradicts"):
        resolve({"FLAGOS_ACCELERATOR": "musa"}, defines={"FLAGOS_BUILD_FLAGGEMS_CPP": "ON"})


# -- FLAGOS_BUILD_JOBS -------------------------------------------------------

@pytest.mark.parametrize("env,jobs,source", [
    ({}, 7, "cpu count"),
    ({"CMAKE_BUILD_PARALLEL_LEVEL": "3"}, 3, "CMAKE_BUILD_PARALLEL_LEVEL"),
    ({"MAX_JOBS": "5", "CMAKE_BUILD_PARALLEL_LEVEL": "3"}, 5, "MAX_JOBS"),
    ({"FLAGOS_BUILD_JOBS": "9", "MAX_JOBS": "5", "CMAKE_BUILD_PARALLEL_LEVEL": "3"}, 9, "environment"),
    ({"FLAGOS_BUILD_JOBS": "", "MAX_JOBS": "5"}, 5, "MAX_JOBS"),  # empty means unset
    ({"FLAGOS_BUILD_JOBS": "", "MAX_JOBS": "", "CMAKE_BUILD_PARALLEL_LEVEL": ""}, 7, "cpu count"),
])
def test_jobs_precedence_and_fallbacks(env, jobs, source):
    r = cfg(**env)
    assert (r.jobs, r.sources["FLAGOS_BUILD_JOBS"]) == (jobs, source)


@pytest.mark.parametrize("bad", ["four", "4k", "0", "-2", "2.5"])
def test_a_bad_job_count_warns_and_falls_through(bad):
    r = cfg(FLAGOS_BUILD_JOBS=bad, MAX_JOBS="4")
    assert r.jobs == 4
    assert [w for w in r.warnings if "FLAGOS_BUILD_JOBS" in w] == [
        f"[flagos] FLAGOS_BUILD_JOBS={bad!r} is not a positive integer; ignoring it"]


def test_the_real_cpu_count_is_the_last_fallback():
    import os
    assert resolve({}).jobs == (os.cpu_count() or 1)


# -- wheel version -----------------------------------------------------------

@pytest.mark.parametrize("accelerator", rc.ACCELERATORS)
def test_wheel_local_defaults_to_the_platforms(accelerator):
    r = cfg(FLAGOS_ACCELERATOR=accelerator)
    assert r.wheel_local == PLATFORMS[accelerator]["wheel_local"]
    no_label = [w for w in r.warnings if "wheel_local" in w]
    assert len(no_label) == (r.wheel_local is None)


def test_wheel_local_per_platform_and_override():
    assert cfg().wheel_version == "2.10.0+cuda13.3"
    assert cfg(FLAGOS_ACCELERATOR="dcu").wheel_version == "2.10.0+dtk2604"
    assert cfg(FLAGOS_ACCELERATOR="musa").wheel_version == "2.10.0+musa5.2.0"
    assert cfg(FLAGOS_WHEEL_LOCAL="cuda12.8").wheel_version == "2.10.0+cuda12.8"
    r = cfg(FLAGOS_ACCELERATOR="metax", FLAGOS_WHEEL_LOCAL="maca3.1")
    assert (r.wheel_version, r.sources["FLAGOS_WHEEL_LOCAL"]) == ("2.10.0+maca3.1", "environment")
    assert not [w for w in r.warnings if "wheel_local" in w]
    assert cfg(FLAGOS_ACCELERATOR="metax").wheel_version == "2.10.0"
    assert cfg(FLAGOS_WHEEL_LOCAL="").wheel_local == "cuda13.3"  # empty means unset


@pytest.mark.parametrize("bad", ["cuda-13.3", "+cuda13.3", "cuda13.", "cu da"])
def test_an_invalid_local_label_is_refused(bad):
    assert f"FLAGOS_WHEEL_LOCAL={bad}" in refused(FLAGOS_WHEEL_LOCAL=bad)


@pytest.mark.parametrize("suffix", ["rc1", "a1", "b1", "rc10", "b2", "a0"])
def test_pre_release_suffixes_are_accepted(suffix):
    r = cfg(FLAGOS_WHEEL_PRERELEASE=suffix)
    assert r.wheel_prerelease == suffix
    assert r.wheel_version == f"2.10.0{suffix}+cuda13.3"


@pytest.mark.parametrize("bad", ["dev1", "post1", "1", "final", "rc", "RC1", "rc01", ".rc1", "-rc1",
                                 "rc1.dev1", "alpha1", "c1", " rc1"])
def test_anything_else_is_refused(bad):
    message = refused(FLAGOS_WHEEL_PRERELEASE=bad)
    assert f"FLAGOS_WHEEL_PRERELEASE={bad} is not a PEP 440 pre-release suffix" in message


def test_empty_pre_release_means_unset():
    assert cfg(FLAGOS_WHEEL_PRERELEASE="").wheel_version == "2.10.0+cuda13.3"


# -- bundling inputs ---------------------------------------------------------

def _assets_warnings(r):
    return [w for w in r.warnings if "FLAGOS_CUDA_ASSETS_DIR" in w]


def test_a_missing_assets_dir_is_one_warning(tmp_path):
    missing = tmp_path / "nope"
    r = cfg(FLAGOS_CUDA_ASSETS_DIR=str(missing))
    assert _assets_warnings(r) == [
        f"[flagos] FLAGOS_CUDA_ASSETS_DIR {missing} does not exist: no CUDA runtime library is "
        f"bundled from it, so the plugin opens an installed one"]
    assert r.cuda_assets_dir == str(missing)


def test_no_assets_warning_when_the_dir_exists_or_nothing_is_bundled(tmp_path):
    assert _assets_warnings(cfg(FLAGOS_CUDA_ASSETS_DIR=str(tmp_path))) == []
    assert _assets_warnings(cfg(FLAGOS_CUDA_ASSETS_DIR=str(tmp_path / "x"),
                                FLAGOS_SKIP_CUDA_ASSETS="1")) == []
    assert _assets_warnings(cfg(FLAGOS_ACCELERATOR="ascend")) == []
    assert _assets_warnings(cfg()) == []  # the default folder is optional


def test_bundling_and_dcu_inputs_are_recorded():
    r = cfg()
    assert (r.skip_cuda_assets, r.ppu_mkl_dir, r.dcu_vendor_core) == (False, "/usr/local/lib", False)
    assert r.cuda_assets_dir == str(ROOT / ".libtorch_cuda_assets")
    r = cfg(FLAGOS_SKIP_CUDA_ASSETS="yes", FLAGOS_PPU_MKL_DIR="/opt/mkl/lib", FLAGOS_DCU_VENDOR_CORE="on")
    assert (r.skip_cuda_assets, r.ppu_mkl_dir, r.dcu_vendor_core) == (True, "/opt/mkl/lib", True)


# -- the record and the CLI ---------------------------------------------------

def test_the_record_module_round_trips():
    r = cfg(FLAGOS_ACCELERATOR="musa", FLAGOS_WHEEL_PRERELEASE="rc2", FLAGOS_BUILD_JOBS="3")
    namespace: dict = {}
    exec(r.to_module(), namespace)
    assert namespace["ACCELERATOR"] == "musa"
    assert namespace["KERNELS"] == {"vendor": True, "flaggems": True, "boxing": False,
                                    "flaggems_cpp": False, "tileops": False}
    assert namespace["WHEEL_VERSION"] == "2.10.0rc2+musa5.2.0"
    assert namespace["JOBS"] == 3
    assert namespace["VERSIONS"]["torch_fl"] == "2.10.0"
    assert namespace["VERSIONS"]["abi"]


def test_the_resolver_reads_exactly_the_registrys_build_variables():
    from torch_fl import _env
    # The spec's "Build switches" table (the registry's "build" group).
    build = {n for n, v in _env.VARIABLES.items() if v.group == "build"}
    assert set(rc.READS) == build
    # Its machine defaults for the default accelerator are the registry's.
    r = cfg()
    for name, value in r.switches().items():
        assert _env.VARIABLES[name].default == ("1" if value else "0"), name
    assert _env.VARIABLES["FLAGOS_ACCELERATOR"].default == rc.DEFAULT_ACCELERATOR
    assert _env.VARIABLES["FLAGOS_ACCELERATOR"].choices == rc.ACCELERATORS
    assert _env.VARIABLES["FLAGOS_CUDA_ASSETS_DIR"].default == rc.DEFAULT_CUDA_ASSETS_DIR
    assert _env.VARIABLES["FLAGOS_PPU_MKL_DIR"].default == rc.DEFAULT_PPU_MKL_DIR


def _cli(args, env, tmp_path):
    clean = {k: v for k, v in __import__("os").environ.items()
             if not k.startswith("FLAGOS_") and k not in ("MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL")}
    clean.update(env)
    return subprocess.run([sys.executable, "-m", "tools.build_config", *args], cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=60)


def test_the_cli_refuses_with_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "torch_fl" / "_build_config.py"
    proc = _cli(["write", str(out)], {"FLAGOS_ACCELERATOR": "foo"}, tmp_path)
    assert proc.returncode == 1
    assert flagos_lines(proc.stderr) == proc.stderr.splitlines()
    assert len(flagos_lines(proc.stderr)) == 1
    assert not out.exists()


def test_the_cli_writes_the_record_and_the_cmake_variables(tmp_path):
    out, cmake = tmp_path / "torch_fl" / "_build_config.py", tmp_path / "vars.cmake"
    proc = _cli(["write", str(out), "--cmake", str(cmake), "--define=FLAGOS_BUILD_BOXING=ON"],
                {"FLAGOS_ACCELERATOR": "dcu", "FLAGOS_BUILD_JOBS": "4"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    namespace: dict = {}
    exec(out.read_text(), namespace)
    assert namespace["ACCELERATOR"] == "dcu" and namespace["KERNELS"]["boxing"] is True
    text = cmake.read_text()
    assert 'set(FLAGOS_ACCELERATOR "dcu")' in text and "set(FLAGOS_BUILD_JOBS 4)" in text
    assert "set(FLAGOS_BUILD_FLAGGEMS_CPP OFF)" in text
    shown = _cli(["show"], {"FLAGOS_ACCELERATOR": "bpu"}, tmp_path)
    assert json.loads(shown.stdout)["KERNELS"]["flaggems"] is False


# -- the installed record -----------------------------------------------------

def test_the_installed_record_is_what_build_config_reports():
    """The build installed torch_fl/_build_config.py beside _C (not in the
    source tree), and a stale FLAGOS_ACCELERATOR export does not change what
    torch_fl.build_config() reports."""
    assert not (ROOT / "python" / "torch_fl" / "_build_config.py").exists()
    probe = run_python("""
        import json, torch_fl._build_config as rec
        print(json.dumps({"file": rec.__file__, "accelerator": rec.ACCELERATOR}))
    """, check=True)
    installed = json.loads(probe.stdout)
    assert Path(installed["file"]).name == "_build_config.py"
    assert not Path(installed["file"]).resolve().is_relative_to(ROOT / "python")
    stale = next(a for a in rc.ACCELERATORS if a != installed["accelerator"])
    proc = run_python("""
        import json, torch_fl
        print(json.dumps(torch_fl.build_config()))
    """, env={"FLAGOS_ACCELERATOR": stale, "FLAGOS_BUILD_BOXING": "1"}, check=True)
    config = json.loads(proc.stdout)
    assert config["ACCELERATOR"] == installed["accelerator"] != stale
    assert set(config["KERNELS"]) == set(rc.KERNEL_SWITCHES.values())
    assert config["PLUGIN"]["name"] == "host"
    assert config["VERSIONS"]["torch_fl"] == "0.1.0"
    assert flagos_lines(proc.stderr) == []
