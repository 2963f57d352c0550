"""The spec's parsing rules, each checked by a real `import torch_fl` in a
fresh interpreter under a crafted environment: the exact effective value and
the exact number of [flagos] lines."""

from __future__ import annotations

import json

import pytest

from conftest import flagos_lines, run_python

# An explicit host plugin: activation then prints nothing, so every [flagos]
# line counted below comes from the environment surface.
BASE = {"FLAGOS_PLUGIN": "host"}


def effective(name: str, env: dict[str, str], reads: int = 2):
    """(value of torch_fl._env.get(name), [flagos] lines) after import and
    `reads` reads: a bad value must still be reported exactly once."""
    code = f"""
        import json, torch_fl
        from torch_fl import _env
        values = [_env.get({name!r}) for _ in range({reads})]
        assert all(v == values[0] for v in values), values
        print(json.dumps(values[0]))
    """
    proc = run_python(code, env={**BASE, **env}, check=True)
    return json.loads(proc.stdout), flagos_lines(proc.stderr)


@pytest.mark.parametrize("text", ["1", "true", "TRUE", "on", "On", "yes", "YES"])
def test_boolean_on_words(text):
    assert effective("FLAGOS_TRACE", {"FLAGOS_TRACE": text}) == (True, [])


@pytest.mark.parametrize("text", ["0", "false", "False", "off", "OFF", "no", "No"])
def test_boolean_off_words(text):
    assert effective("FLAGOS_ALIAS_CUDA", {"FLAGOS_ALIAS_CUDA": text}) == (False, [])


@pytest.mark.parametrize("name,default", [("FLAGOS_ALIAS_CUDA", True), ("FLAGOS_TRACE", False),
                                          ("FLAGOS_USE_CACHING_ALLOCATOR", True)])
def test_unset_and_empty_are_the_default_not_off(name, default):
    assert effective(name, {}) == (default, [])
    assert effective(name, {name: ""}) == (default, [])


@pytest.mark.parametrize("text", ["2", "enable", "y", "tru"])
def test_a_non_boolean_warns_once_and_uses_the_default(text):
    value, lines = effective("FLAGOS_ALIAS_CUDA", {"FLAGOS_ALIAS_CUDA": text})
    assert value is True
    assert lines == [f"[flagos] FLAGOS_ALIAS_CUDA='{text}' is not a boolean "
                     "(1/true/on/yes or 0/false/off/no); using the default (on)"]


def test_a_bad_value_of_a_variable_nothing_reads_yet_is_reported_at_import():
    proc = run_python("import torch_fl", env={**BASE, "FLAGOS_DIST_STAGED_GLOO": "maybe"}, check=True)
    assert len(flagos_lines(proc.stderr)) == 1
    assert "FLAGOS_DIST_STAGED_GLOO='maybe'" in proc.stderr


def test_enum_accepts_its_choices_in_any_case():
    assert effective("FLAGOS_FORCE_BACKEND", {"FLAGOS_FORCE_BACKEND": "Vendor"}) == ("vendor", [])
    assert effective("FLAGOS_FORCE_BACKEND", {}) == (None, [])
    assert effective("FLAGOS_STARTUP_PROFILE", {}) == ("full", [])


def test_enum_outside_its_choices_reports_them_and_uses_the_default():
    value, lines = effective("FLAGOS_FORCE_BACKEND", {"FLAGOS_FORCE_BACKEND": "flaggems,vendor"})
    assert value is None
    assert lines == ["[flagos] FLAGOS_FORCE_BACKEND='flaggems,vendor' is not one of "
                     "flaggems, vendor, tileops; using the default (unset)"]
    value, lines = effective("FLAGOS_STARTUP_PROFILE", {"FLAGOS_STARTUP_PROFILE": "fast"})
    assert value == "full" and len(lines) == 1 and "one of full, minimal" in lines[0]


def test_numbers_parse_completely_or_warn():
    assert effective("FLAGOS_TILEOPS_CACHE_MAX", {"FLAGOS_TILEOPS_CACHE_MAX": "64"}) == (64, [])
    value, lines = effective("FLAGOS_TILEOPS_CACHE_MAX", {"FLAGOS_TILEOPS_CACHE_MAX": "64k"})
    assert value == 512 and len(lines) == 1
    assert effective("FLAGOS_BPU_ACT_SCALE", {"FLAGOS_BPU_ACT_SCALE": "0.5"}) == (0.5, [])
    assert effective("FLAGOS_BPU_ACT_SCALE", {}) == (0.05, [])
    assert effective("FLAGOS_BUILD_JOBS", {}) == (None, [])  # "System CPU count": the reader's


def test_paths_and_strings_are_taken_verbatim(tmp_path):
    conf = tmp_path / "b.conf"  # the conf must exist: routing loads it at import
    conf.write_text("# one route: a conf routing nothing is a note of its own\nneg = cpu\n")
    assert effective("FLAGOS_BACKEND_CONFIG", {"FLAGOS_BACKEND_CONFIG": str(conf)}) == (str(conf), [])
    assert effective("FLAGOS_BACKEND_CONFIG", {"FLAGOS_BACKEND_CONFIG": ""}) == (None, [])
    assert effective("FLAGOS_BPU_CACHE", {}) == ("~/.cache/torch_fl_bpu", [])


def test_flagos_log_unknown_entries_are_reported_once_per_process():
    value, lines = effective("FLAGOS_LOG", {"FLAGOS_LOG": "dispatch, verbose,op_cache,verbose"}, reads=3)
    assert value == ["dispatch", "op_cache"]
    # The dispatch and op_cache channels are on: their own lines (e.g. a
    # shipped conf generated for another torch) are not what this test counts.
    assert [line for line in lines if not line.startswith(("[flagos] dispatch:", "[flagos] op_cache:"))] == [
        "[flagos] FLAGOS_LOG entry 'verbose' names none of dispatch, fallback, op_cache, plugin; ignoring it"]
    assert effective("FLAGOS_LOG", {"FLAGOS_LOG": ""}) == ([], [])


def test_op_family_members_are_declared_and_read_verbatim():
    # A route the host plugin can serve: routing prints nothing for it.
    assert effective("FLAGOS_OP_add__Tensor", {"FLAGOS_OP_add__Tensor": "cpu_fallback"}) == \
        ("cpu_fallback", [])


def test_unknown_names_warn_once_each_with_the_closest_declared_name():
    env = {**BASE, "FLAGOS_LOG_DISPACH": "1", "FLAGOS_TRACER_LIBRAY": "/x.so",
           "FLAGOS_QQQQ": "1", "FLAGOS_OP_mm": "cpu_fallback"}
    proc = run_python("import torch_fl", env=env, check=True)
    assert flagos_lines(proc.stderr) == [
        "[flagos] FLAGOS_LOG_DISPACH is not a torch_fl variable and nothing reads it; "
        "did you mean FLAGOS_LOG?",
        "[flagos] FLAGOS_QQQQ is not a torch_fl variable and nothing reads it",
        "[flagos] FLAGOS_TRACER_LIBRAY is not a torch_fl variable and nothing reads it; "
        "did you mean FLAGOS_TRACER_LIBRARY?",
    ]


def test_control_characters_in_names_and_values_keep_each_report_one_line():
    env = {**BASE, "FLAGOS_Q\nZ": "1", "FLAGOS_TRACE": "on\n[flagos] forged", "FLAGOS_OP_": "cpu"}
    proc = run_python("import torch_fl", env=env, check=True)
    assert flagos_lines(proc.stderr) == [
        "[flagos] FLAGOS_OP_ is not a torch_fl variable and nothing reads it",
        "[flagos] FLAGOS_Q?Z is not a torch_fl variable and nothing reads it",
        "[flagos] FLAGOS_TRACE='on?[flagos] forged' is not a boolean (1/true/on/yes or 0/false/off/no); "
        "using the default (off)",
    ]
    assert len(proc.stderr.splitlines()) == 3, proc.stderr


def test_retired_names_are_inert_and_silent():
    env = {**BASE, "FLAGOS_LOG_DISPATCH": "1", "FLAGOS_USE_TILEOPS": "1", "FLAGOS_CUPTI_LIBRARY": "x",
           "ALL_USE_FLAGGEMS": "1", "ACCELERATOR": "metax"}
    value, lines = effective("FLAGOS_LOG", env)
    assert (value, lines) == ([], [])


def test_get_refuses_an_undeclared_name():
    proc = run_python("""
        import torch_fl
        from torch_fl import _env
        try:
            _env.get("FLAGOS_LOG_DISPATCH")
        except KeyError as e:
            print("refused", e)
    """, env=BASE, check=True)
    assert "refused" in proc.stdout


@pytest.mark.parametrize("exported,expected,wrote", [(None, "1", True), ("", "", False), ("0", "0", False)])
def test_set_foreign_never_overrides_an_explicit_export(exported, expected, wrote):
    env = dict(BASE)
    if exported is not None:
        env["TILELANG_DISABLE_CACHE"] = exported
    proc = run_python("""
        import os, json, torch_fl
        from torch_fl import _env
        wrote = _env.set_foreign("TILELANG_DISABLE_CACHE", "1")
        print(json.dumps([os.environ.get("TILELANG_DISABLE_CACHE"), wrote]))
    """, env=env, check=True)
    assert json.loads(proc.stdout) == [expected, wrote]


def test_set_foreign_refuses_read_only_and_unknown_names():
    proc = run_python("""
        import torch_fl
        from torch_fl import _env
        for name in ("CUDA_HOME", "FLAGOS_TRACE"):
            try:
                _env.set_foreign(name, "x")
            except KeyError:
                print("refused", name)
    """, env=BASE, check=True)
    assert proc.stdout.split("\n")[:2] == ["refused CUDA_HOME", "refused FLAGOS_TRACE"]


def test_an_unknown_gems_vendor_raises_at_import_naming_the_valid_ones():
    proc = run_python("import torch_fl", env={**BASE, "GEMS_VENDOR": "nvidai"})
    assert proc.returncode != 0
    assert ("RuntimeError: [flagos] GEMS_VENDOR='nvidai' is not a vendor torch_fl can configure; "
            "valid values: ascend, enflame, hygon, metax, mthreads, nvidia, tsingmicro") in proc.stderr


@pytest.mark.parametrize("exported", ["nvidia", "", None])
def test_gems_vendor_with_the_host_plugin(exported):
    env = dict(BASE)
    if exported is not None:
        env["GEMS_VENDOR"] = exported
    proc = run_python("import os, json, torch_fl; print(json.dumps(os.environ.get('GEMS_VENDOR')))",
                      env=env, check=True)
    # An explicit value (even empty) is kept; unset stays unset: the host
    # plugin is not a FlagGems platform, so there is nothing to detect.
    assert json.loads(proc.stdout) == exported
    assert flagos_lines(proc.stderr) == []


def test_gems_vendor_comes_from_the_plugins_declaration(tmp_path, monkeypatch):
    from torch_fl import _manifest, _vendor
    lib = tmp_path / "libflagos_acme.so"
    monkeypatch.setattr(_manifest, "library_of", lambda name: str(lib) if name == "acme" else None)
    _manifest.of.cache_clear()
    assert _vendor.declared_vendor("acme") is None  # no manifest: not a FlagGems platform
    _manifest.of.cache_clear()
    lib.with_suffix(".toml").write_text('[requires]\nany_path = ["/"]\n\n[flaggems]\nvendor = "acme"\n')
    assert _vendor.declared_vendor("acme") == "acme"
    _manifest.of.cache_clear()
    lib.with_suffix(".toml").write_text("[flaggems]\nvendor = 3\n")
    with pytest.raises(RuntimeError, match=r"\[flaggems\] vendor must be a string"):
        _vendor.declared_vendor("acme")
    _manifest.of.cache_clear()


def test_a_plugins_other_declarations_are_read_and_typed(tmp_path, monkeypatch):
    """What a vendor's stack needs is declared beside its library
    (torch_fl._manifest), never looked up by vendor name in torch_fl."""
    from torch_fl import _manifest
    lib = tmp_path / "libflagos_acme.so"
    monkeypatch.setattr(_manifest, "library_of", lambda name: str(lib) if name == "acme" else None)
    _manifest.of.cache_clear()
    lib.with_suffix(".toml").write_text('[environment]\nACME_QUEUE = "0"\n\n[compile]\nfork_safe = false\n')
    assert _manifest.environment("acme") == {"ACME_QUEUE": "0"}
    assert _manifest.declared("acme", "compile", "fork_safe", bool, True) is False
    assert _manifest.declared("acme", "compat", "qwen_image_rope", bool, False) is False  # not declared
    assert _manifest.declared("nobody", "compile", "fork_safe", bool, True) is True  # no plugin, no file
    _manifest.of.cache_clear()
    lib.with_suffix(".toml").write_text('[environment]\nACME_QUEUE = 0\n\n[compile]\nfork_safe = "no"\n')
    with pytest.raises(RuntimeError, match=r"libflagos_acme.toml: \[compile\] fork_safe must be a bool"):
        _manifest.declared("acme", "compile", "fork_safe", bool, True)
    with pytest.raises(RuntimeError, match=r"\[environment\] ACME_QUEUE must be a string"):
        _manifest.environment("acme")
    _manifest.of.cache_clear()


def test_gems_vendor_detection_for_accelerator_plugins():
    proc = run_python("""
        import os, torch_fl
        from torch_fl import _vendor
        print(_vendor.configure("cuda"), os.environ["GEMS_VENDOR"])
        del os.environ["GEMS_VENDOR"]
        print(_vendor.configure("tsingmicro"), os.environ["GEMS_VENDOR"])
        del os.environ["GEMS_VENDOR"]
        # bpu is not a FlagGems platform: nothing detected, nothing written.
        print(_vendor.configure("bpu"), os.environ.get("GEMS_VENDOR"))
    """, env=BASE, check=True)
    assert proc.stdout.splitlines() == ["nvidia nvidia", "tsingmicro tsingmicro", "None None"]
