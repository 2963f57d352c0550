"""Per-operator routing (docs/routing.md), each behaviour checked by a real
`import torch_fl` in a fresh interpreter: the conf in use, its errors (file
and line), FLAGOS_OP_<op>, FLAGOS_FORCE_BACKEND, FLAGOS_DISABLE_FLAGGEMS_PY,
FLAGOS_LOG, the native, flaggems and none routes, and the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import _clean_env, flagos_lines, run_python

# An explicit host plugin: activation prints nothing, so every [flagos] line
# counted below comes from routing.
BASE = {"FLAGOS_PLUGIN": "host"}
VALID = "native, cpu, cuda, flaggems, flaggems_cpp, tileops, cpu_fallback, none"


def run(code: str, **env: str):
    return run_python(code, env={**BASE, **env})


def torch_release() -> str:
    """The installed torch's version without its local label ("2.13.0")."""
    proc = run_python("import torch; print(torch.__version__)")
    return proc.stdout.strip().split("+")[0]


def last_json(proc):
    """The JSON value a child printed last."""
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def confs() -> Path:
    """The directory the build installed the platform confs in."""
    proc = run("import json, torch_fl; print(json.dumps(torch_fl._routing.confs_dir()))")
    return Path(last_json(proc))


def line_of(conf: Path, op: str) -> int:
    """The line of `op`'s route in a TOML conf."""
    for n, line in enumerate(conf.read_text().splitlines(), 1):
        if line.startswith(f'"{op}" = '):
            return n
    raise AssertionError(f"{op} not in {conf}")


def default_line(conf: Path) -> int:
    return next(n for n, line in enumerate(conf.read_text().splitlines(), 1) if line.startswith("default = "))


@pytest.fixture
def fake_flag_gems(tmp_path) -> dict[str, str]:
    """A `flag_gems` package whose _FULL_CONFIG implements add.Tensor without
    calling add (a - (-b)*alpha) and counts its calls, and lists mul.Tensor
    under a condition that is false; returns the env that puts it on the path."""
    pkg = tmp_path / "fg" / "flag_gems"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "__version__ = '0.0+test'\n"
        "calls = {'add.Tensor': 0}\n"
        "def add(a, b, *, alpha=1):\n"
        "    calls['add.Tensor'] += 1\n"
        "    return torch.sub(a, b.neg() * alpha)\n"
        "def mul(a, b):\n"
        "    raise AssertionError('registered against its condition')\n"
        "_FULL_CONFIG = (('add.Tensor', add), ('mul.Tensor', mul, lambda: False))\n")
    return {"PYTHONPATH": str(tmp_path / "fg")}


@pytest.fixture
def hidden_flag_gems(tmp_path) -> dict[str, str]:
    """The env under which `import flag_gems` fails as if it were not
    installed, also where a real FlagGems is (a GPU host)."""
    pkg = tmp_path / "hidden" / "flag_gems"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'flag_gems'\", name='flag_gems')\n")
    return {"PYTHONPATH": str(tmp_path / "hidden")}


# What each child prints: add on flagos against the CPU, and add.Tensor's route.
ADD = """
    import json, torch, torch_fl
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, -4.0, 8.0])
    x, y = a.to("flagos"), b.to("flagos")
    same = torch.equal((x + y).cpu(), a + b) and torch.equal(torch.add(x, y, alpha=3).cpu(), torch.add(a, b, alpha=3))
    out = {"same": same, "route": torch_fl.routes("add.Tensor")[0], "torch": torch.__version__}
    try:
        import flag_gems
    except ImportError:
        flag_gems = None
    if hasattr(flag_gems, "calls"):  # the tests' fake, not a real FlagGems
        out["calls"] = flag_gems.calls["add.Tensor"]
    print(json.dumps(out))
"""


# -- which conf is in use -------------------------------------------------------

def test_default_conf_is_the_build_records_host_toml(confs):
    code = """
        import json, os, torch, torch_fl
        path = torch_fl.backend_config_path()
        print(json.dumps({"path": path, "installed": torch_fl._C._routes()["conf"],
                          "env": "FLAGOS_BACKEND_CONFIG" in os.environ,
                          "route": torch_fl.routes("add.Tensor")[0],
                          "default": torch_fl._routing.default_route()}))
    """
    proc = run(code)
    out = last_json(proc)
    host = confs / "host.toml"
    assert out["path"] == out["installed"] == str(host)
    assert out["env"] is False  # the package never writes the variable
    assert out["route"] == {"op": "add.Tensor", "route": "cpu", "why": f"conf {host}:{line_of(host, 'add.Tensor')}"}
    assert out["default"] == {"op": "", "route": "cpu_fallback", "why": f"conf default {host}:{default_line(host)}"}
    assert flagos_lines(proc.stderr) == []


def test_backend_config_overrides_and_is_left_as_exported(tmp_path):
    conf = tmp_path / "mine.toml"
    conf.write_text('[routes]\n"mul.Tensor" = "cpu"\n')
    code = """
        import json, os, torch_fl
        print(json.dumps({"path": torch_fl.backend_config_path(), "installed": torch_fl._C._routes()["conf"],
                          "env": os.environ["FLAGOS_BACKEND_CONFIG"], "routes": torch_fl.routes()}))
    """
    out = last_json(run(code, FLAGOS_BACKEND_CONFIG=str(conf)))
    assert out["path"] == out["installed"] == out["env"] == str(conf)
    assert out["routes"] == [{"op": "mul.Tensor", "route": "cpu", "why": f"conf {conf}:2"}]


def test_a_confs_route_kinds_are_read_again_when_the_file_changes(tmp_path):
    # The import asks for the conf's kinds once per Python-loaded route kind
    # and parses the file once; an edited file is parsed again.
    conf = tmp_path / "kinds.toml"
    conf.write_text('[routes]\n"mul.Tensor" = "cpu"\n')
    code = f"""
        import os, torch_fl
        from torch_fl import _routing
        first = sorted(_routing.conf_route_kinds({str(conf)!r}))
        with open({str(conf)!r}, "a") as f:
            f.write('"add.Tensor" = "cpu_fallback"\\n')
        print(first, sorted(_routing.conf_route_kinds({str(conf)!r})))
    """
    assert run(code).stdout.strip() == "['cpu'] ['cpu', 'cpu_fallback']"


def test_relative_backend_config_is_refused():
    assert import_error(Path("confs/host.toml"))[0] == (
        "[flagos] FLAGOS_BACKEND_CONFIG must be an absolute path, got 'confs/host.toml'")


def test_routes_lists_every_listed_op_sorted_and_answers_for_unlisted_ones(tmp_path):
    conf = tmp_path / "two.toml"
    conf.write_text('[conf]\ndefault = "cpu_fallback"\n[routes]\n"neg" = "cpu"\n"abs" = "cpu_fallback"\n')
    code = """
        import json, torch_fl
        print(json.dumps({"all": torch_fl.routes(), "unlisted": torch_fl.routes("mul.Tensor")}))
    """
    out = last_json(run(code, FLAGOS_BACKEND_CONFIG=str(conf)))
    assert [r["op"] for r in out["all"]] == ["abs", "neg"]
    assert out["unlisted"] == [{"op": "mul.Tensor", "route": "cpu_fallback", "why": f"conf default {conf}:2"}]


# -- conf errors stop the import, naming file and line ----------------------------

# Prints the import's error (or "imported"), then torch's version.
IMPORT = """
    try:
        import torch_fl
    except RuntimeError as exc:
        print(exc)
    else:
        print("imported")
    import torch
    print(torch.__version__)
"""


def import_error(conf: Path) -> tuple[str, str]:
    """(the import's error message, torch's version) under FLAGOS_BACKEND_CONFIG=conf."""
    proc = run(IMPORT, FLAGOS_BACKEND_CONFIG=str(conf))
    assert proc.returncode == 0, proc.stderr
    got, torch_version = proc.stdout.strip().splitlines()
    return got, torch_version


@pytest.mark.parametrize("name, text, message", [
    ("syntax.toml", '[routes]\n"add.Tensor" = "cpu"\n"mm" = cpu\n', None),
    ("op.toml", '[routes]\n"add.Tensor" = "cpu"\n"add.Tensr" = "cpu"\n',
     "3: 'add.Tensr': no such operator in torch {torch}"),
    ("kind.toml", '[conf]\n[routes]\n"add.Tensor" = "gpu"\n',
     f"3: unknown route 'gpu' for 'add.Tensor' (valid: {VALID})"),
    ("composite.toml", '[routes]\n\n"linear" = "cpu"\n',
     "3: 'linear': CompositeImplicitAutograd: it decomposes into other operators; route those instead"),
    ("syntax.conf", "# upstream\nmm = vendor\nadd.Tensor flagos_python\n",
     "3: expected `op = backend` or `include <path>`, got 'add.Tensor flagos_python'"),
    ("op.conf", "mm = vendor\n\nadd_Tensor = cpu\n", "3: 'add_Tensor': no such operator in torch {torch}"),
    ("kind.conf", "mm = vendor\nadd.Tensor = gpu  # typo\n",
     f"2: unknown route 'gpu' for 'add.Tensor' (valid: {VALID})"),
])
def test_conf_errors_name_file_and_line(tmp_path, name, text, message):
    conf = tmp_path / name
    conf.write_text(text)
    got, torch_version = import_error(conf)
    if message is None:  # toml++ words a syntax error; the line is ours to check
        assert got.startswith(f"[flagos] routing conf {conf}:3: "), got
    else:
        assert got == f"[flagos] routing conf {conf}:" + message.format(torch=torch_version)


def test_missing_conf_and_missing_include(tmp_path):
    missing = tmp_path / "absent.toml"
    assert import_error(missing)[0] == f"[flagos] routing conf {missing}: no such file"
    conf = tmp_path / "inc.conf"
    conf.write_text("# includes a file that is not there\ninclude sub/gone.conf\n")
    assert import_error(conf)[0] == (f"[flagos] routing conf {conf}:2: included file "
                                   f"{tmp_path / 'sub' / 'gone.conf'} does not exist")


def test_a_conf_path_that_is_not_a_regular_file_says_what_it_is(tmp_path):
    assert import_error(tmp_path)[0] == f"[flagos] routing conf {tmp_path}: is a directory, not a regular file"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(IMPORT)], input="", capture_output=True, text=True, timeout=300,
                          env={**_clean_env(BASE), "FLAGOS_BACKEND_CONFIG": "/dev/stdin"})
    assert proc.stdout.splitlines()[0] == "[flagos] routing conf /dev/stdin: is a pipe, not a regular file"


def test_a_duplicated_key_is_one_clean_line(tmp_path):
    conf = tmp_path / "dup.toml"
    conf.write_text('[routes]\n"mm" = "cpu"\n"neg" = "cpu"\n"mm" = "native"\n')
    assert import_error(conf)[0] == (
        f"[flagos] routing conf {conf}:4: key 'mm' is set twice (a TOML table holds each key once)")


def test_conf_errors_quote_no_more_than_the_offending_token(tmp_path):
    # A file that is not a conf must not end up in a log: at most 40
    # characters of the token, and a file with a NUL byte is not read as text.
    notes = tmp_path / "notes.txt"
    notes.write_text("the-password-is-hunter2-and-the-pin-is-1234 and more\n")
    assert import_error(notes)[0] == (f"[flagos] routing conf {notes}:1: expected `op = backend` or "
                                      "`include <path>`, got 'the-password-is-hunter2-and-the-pin-is-1...'")
    proc = run(IMPORT, FLAGOS_BACKEND_CONFIG="/proc/self/environ", SECRET_VALUE="s3cr3t")
    assert proc.stdout.splitlines()[0] == "[flagos] routing conf /proc/self/environ: contains a NUL byte: not a text file"
    assert "s3cr3t" not in proc.stdout + proc.stderr


def test_a_bad_conf_stops_the_import_with_one_clear_last_line(tmp_path):
    conf = tmp_path / "bad.toml"
    conf.write_text('[routes]\n"mm" = "fast"\n')
    proc = run("import torch_fl", FLAGOS_BACKEND_CONFIG=str(conf))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        f"RuntimeError: [flagos] routing conf {conf}:2: unknown route 'fast' for 'mm' (valid: {VALID})")


# -- the upstream line format ---------------------------------------------------------

def test_line_format_with_comments_and_include(tmp_path, confs):
    (tmp_path / "platform.conf").write_text(f"include {confs / 'host.toml'}\n")
    conf = tmp_path / "backends_custom.conf"
    conf.write_text("# a custom conf in the upstream format\n"
                    "include platform.conf   # relative to this file\n"
                    "\n"
                    "mm = vendor             # the plugin's own kernel\n"
                    "add.Tensor = cpu_fallback\n")
    code = """
        import json, torch, torch_fl
        a, b = torch.randn(3, 4), torch.randn(4, 2)
        ok = torch.allclose((a.flagos() @ b.flagos()).cpu(), a @ b) and torch.equal((a.flagos() + 1).cpu(), a + 1)
        print(json.dumps({"ok": ok, "mm": torch_fl.routes("mm")[0], "add": torch_fl.routes("add.Tensor")[0],
                          "neg": torch_fl.routes("neg")[0]}))
    """
    out = last_json(run(code, FLAGOS_BACKEND_CONFIG=str(conf)))
    assert out["ok"]
    assert out["mm"] == {"op": "mm", "route": "native", "why": f"conf {conf}:4"}
    assert out["add"] == {"op": "add.Tensor", "route": "cpu_fallback", "why": f"conf {conf}:5"}
    host = confs / "host.toml"
    assert out["neg"] == {"op": "neg", "route": "cpu", "why": f"conf {host}:{line_of(host, 'neg')}"}


# -- FLAGOS_OP_<op> ---------------------------------------------------------------------

def test_op_override_over_the_conf_and_for_an_unlisted_op(tmp_path):
    conf = tmp_path / "one.toml"
    conf.write_text('[routes]\n"add.Tensor" = "cpu"\n')
    code = """
        import json, torch, torch_fl
        a = torch.tensor([1.0, -2.0])
        ok = torch.equal((a.flagos() + a.flagos()).cpu(), a + a) and torch.equal(a.flagos().neg().cpu(), -a)
        print(json.dumps({"ok": ok, "routes": torch_fl.routes()}))
    """
    out = last_json(run(code, FLAGOS_BACKEND_CONFIG=str(conf), FLAGOS_OP_add__Tensor="cpu_fallback",
                        FLAGOS_OP_neg="cpu"))
    assert out["ok"]
    assert out["routes"] == [
        {"op": "add.Tensor", "route": "cpu_fallback", "why": f"FLAGOS_OP_add__Tensor over cpu (conf {conf}:2)"},
        {"op": "neg", "route": "cpu", "why": "FLAGOS_OP_neg"},
    ]


def test_op_override_names_in_place_and_dunder_ops():
    code = """
        import json, torch_fl
        print(json.dumps([torch_fl.routes(op)[0]["route"] for op in ("add_.Tensor", "__ilshift__.Tensor")]))
    """
    out = last_json(run(code, FLAGOS_OP_add___Tensor="cpu_fallback", FLAGOS_OP___ilshift____Tensor="cpu_fallback"))
    assert out == ["cpu_fallback", "cpu_fallback"]


def test_bad_op_overrides_are_one_line_each_and_change_nothing():
    proc = run(ADD, FLAGOS_OP_add__Tensor="gpu", FLAGOS_OP_add__Tensr="cpu")
    out = last_json(proc)
    assert out["same"] and out["route"]["route"] == "cpu"
    assert flagos_lines(proc.stderr) == [
        f"[flagos] FLAGOS_OP_add__Tensor=gpu: unknown route (valid: {VALID}); ignored",
        f"[flagos] FLAGOS_OP_add__Tensr: 'add.Tensr': no such operator in torch {out['torch']}; ignored",
    ]


# -- the none route ------------------------------------------------------------------------

def test_none_route_raises_one_clear_error(tmp_path):
    conf = tmp_path / "none.toml"
    conf.write_text('[routes]\n"add.Tensor" = "none"\n')
    code = """
        import json, torch, torch_fl
        x = torch.ones(2).flagos()
        try:
            x + x
        except RuntimeError as exc:
            print(json.dumps({"error": str(exc), "route": torch_fl.routes("add.Tensor")[0]}))
    """
    proc = run(code, FLAGOS_BACKEND_CONFIG=str(conf))
    out = last_json(proc)
    message = (f"aten::add.Tensor is not routed on flagos (conf {conf}:2); route it with "
               "FLAGOS_OP_add__Tensor=cpu_fallback or in a custom conf (FLAGOS_BACKEND_CONFIG)")
    assert out["error"] == "[flagos] " + message
    assert out["route"]["route"] == "none" and out["route"]["error"] == message
    assert flagos_lines(proc.stderr) == []


@pytest.mark.parametrize("default", ["cpu", "none"])
def test_conf_default_routes_the_ops_the_conf_does_not_list(tmp_path, default):
    conf = tmp_path / "default.toml"
    conf.write_text(f'[conf]\ndefault = "{default}"\n[routes]\n"neg" = "cpu_fallback"\n')
    code = """
        import json, torch, torch_fl
        x = torch.arange(3.0).flagos()
        try:
            value = (x * 2).cpu().tolist()
        except RuntimeError as exc:
            value = str(exc)
        print(json.dumps({"mul": value, "neg": (-x).cpu().tolist(),
                          "route": torch_fl.routes("mul.Tensor")[0]}))
    """
    proc = run(code, FLAGOS_BACKEND_CONFIG=str(conf), FLAGOS_LOG="dispatch,fallback")
    out = last_json(proc)
    why = f"conf default {conf}:2"
    assert out["route"] == {"op": "mul.Tensor", "route": default, "why": why}
    assert out["neg"] == [-0.0, -1.0, -2.0]  # listed: its own route
    assert "cpu_fallback: aten::neg" in proc.stderr
    if default == "cpu":
        assert out["mul"] == [0.0, 2.0, 4.0]
        assert f"dispatch: aten::mul.Tensor -> cpu ({why})" in proc.stderr
        assert "cpu_fallback: aten::mul" not in proc.stderr
    else:
        assert out["mul"] == (f"[flagos] aten::mul.Tensor is not routed on flagos ({why}); route it with "
                              "FLAGOS_OP_mul__Tensor=cpu_fallback or in a custom conf (FLAGOS_BACKEND_CONFIG)")


# -- the native route --------------------------------------------------------------------

def test_plugin_kernels_serve_only_operators_this_torch_declares_alike(fake_plugin, tmp_path):
    """A native kernel serves an operator only when its schema declares it as
    this torch does (the out= kernel then also serves the functional and
    in-place forms); any other is skipped with one warning naming it and why."""
    conf = tmp_path / "empty.toml"
    conf.write_text("[conf]\n")
    code = """
        import json, sys
        try:
            import torch_fl  # a fake plugin without devices: activated, then refused
        except RuntimeError as e:
            assert "reports 0 devices" in str(e), e
        _C = sys.modules["torch_fl._C"]
        ops = ("mul.out", "mul.Tensor", "mul_.Tensor", "add.out", "add.Tensor", "sub.out")
        print(json.dumps({op: _C._native_serves(op) for op in ops}))
    """
    proc = run_python(code, env={"FLAGOS_PLUGIN": fake_plugin("stale_kernels"), "FLAGOS_BACKEND_CONFIG": str(conf)})
    assert last_json(proc) == {"mul.out": True, "mul.Tensor": True, "mul_.Tensor": True,
                               "add.out": False, "add.Tensor": False, "sub.out": False}
    prefix = "[flagos] plugin fake_stale_kernels: native kernel "
    lines = flagos_lines(proc.stderr)
    assert lines[:2] == [
        prefix + "'aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)' skipped: "
                 "this torch declares the operator differently",
        prefix + "'aten::no_such_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)' skipped: "
                 "this torch has no such operator"]
    assert len(lines) == 3, lines
    assert lines[2].startswith(prefix + "'aten::sub.out(Tensor self' skipped: it does not parse (")


def test_native_route_matches_cpu_and_unsupported_dtypes_take_the_next_route(confs):
    code = """
        import json, torch, torch_fl
        torch.manual_seed(0)
        x, y, m = torch.randn(5, 7), torch.randn(5, 7), torch.randn(7, 3)
        i, j = torch.arange(-6, 6, dtype=torch.int8).reshape(3, 4), torch.full((3, 4), 100, dtype=torch.int8)
        f = lambda t: t.to("flagos")
        checks = {
            "add": torch.equal((f(x) + f(y)).cpu(), x + y),
            "add_alpha": torch.equal(torch.add(f(x), f(y), alpha=2).cpu(), torch.add(x, y, alpha=2)),
            "add_": torch.equal(f(x).add_(f(y)).cpu(), x.clone().add_(y)),
            "mul": torch.equal((f(x) * f(y)).cpu(), x * y),
            "neg": torch.equal(f(x).neg().cpu(), x.neg()),
            "relu": torch.equal(f(x).relu().cpu(), x.relu()),
            "mm": torch.allclose((f(x) @ f(m)).cpu(), x @ m, atol=1e-6),
            "sum": torch.allclose(f(x).sum(1).cpu(), x.sum(1), atol=1e-6),
            "int8_add": torch.equal((f(i) + f(j)).cpu(), i + j),
            "int8_mul": torch.equal((f(i) * f(j)).cpu(), i * j),
        }
        print(json.dumps({"checks": checks, "add": torch_fl.routes("add.Tensor")[0],
                          "sub": torch_fl.routes("sub.Tensor")[0]["route"]}))
    """
    native = confs / "host_native.toml"
    proc = run(code, FLAGOS_BACKEND_CONFIG=str(native))
    out = last_json(proc)
    assert out["checks"] == {k: True for k in out["checks"]}
    assert out["add"] == {"op": "add.Tensor", "route": "native", "why": f"conf {native}:{line_of(native, 'add.Tensor')}"}
    assert out["sub"] == "cpu"  # from the included host.toml
    assert flagos_lines(proc.stderr) == []


# -- the flaggems route ------------------------------------------------------------------

NO_IMPL = "flaggems has no implementation of these ops here"
DISABLED = "FLAGOS_DISABLE_FLAGGEMS_PY=1 leaves the FlagGems Python layer unregistered"
NOT_INSTALLED = "flag_gems is not installed (No module named 'flag_gems')"


@pytest.mark.parametrize("gems, env, calls, route, cause, demoted", [
    # add.Tensor runs the Python implementation; mul.Tensor's entry has a
    # false condition, so it is not registered and takes its next route.
    (True, {"FLAGOS_OP_mul__Tensor": "flaggems"}, 2, "flaggems", NO_IMPL, "mul.Tensor"),
    (True, {"FLAGOS_DISABLE_FLAGGEMS_PY": "1"}, 0, "cpu", DISABLED, "add.Tensor"),
    (False, {}, None, "cpu", NOT_INSTALLED, "add.Tensor"),
], ids=["registered", "disabled", "no-flag_gems"])
def test_flaggems_route(fake_flag_gems, hidden_flag_gems, gems, env, calls, route, cause, demoted):
    proc = run(ADD, FLAGOS_OP_add__Tensor="flaggems", **env, **(fake_flag_gems if gems else hidden_flag_gems))
    out = last_json(proc)
    assert out["same"]
    assert out.get("calls") == calls
    assert out["route"]["route"] == route
    if route == "cpu":
        assert out["route"]["why"].endswith(f", demoted from flaggems: {cause}")
    assert flagos_lines(proc.stderr) == [f"[flagos] 1 routes to flaggems: {cause}; they run as cpu ({demoted})"]


def test_a_raising_python_implementation_is_reported_with_its_message(tmp_path):
    pkg = tmp_path / "flag_gems"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "def neg(x):\n    raise ValueError('kernel exploded')\n_FULL_CONFIG = [('neg', neg)]\n")
    code = """
        import torch, torch_fl
        try:
            torch.ones(2).flagos().neg()
        except RuntimeError as exc:
            print(str(exc).splitlines()[0])
    """
    proc = run(code, FLAGOS_OP_neg="flaggems", PYTHONPATH=str(tmp_path))
    assert proc.stdout.strip().startswith(
        "[flagos] flaggems implementation of aten::neg raised: ValueError: kernel exploded"), proc.stdout


def test_python_implementations_get_dtypes_and_memory_formats_as_torch_objects(tmp_path):
    """As torch's own Python kernels get them (an IValue holds them as ints):
    FlagGems' _softmax_backward_data passes its input_dtype to empty_like,
    which refuses an int."""
    pkg = tmp_path / "flag_gems"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "seen = []\n"
        "def softmax_backward(grad, out, dim, input_dtype):\n"
        "    seen.append(type(input_dtype).__name__)\n"
        "    return torch.ops.aten._softmax_backward_data(grad.cpu(), out.cpu(), dim, input_dtype).to(grad.device)\n"
        "def clone(x, *, memory_format=None):\n"
        "    seen.append(type(memory_format).__name__)\n"
        "    return torch.ops.aten.clone(x.cpu(), memory_format=memory_format).to(x.device)\n"
        "_FULL_CONFIG = [('_softmax_backward_data', softmax_backward), ('clone', clone)]\n")
    code = """
        import json, torch, torch_fl, flag_gems
        x = torch.randn(3, 4).requires_grad_()
        y = x.detach().to("flagos").requires_grad_()
        torch.softmax(x, -1).mul(torch.arange(4.0)).sum().backward()
        torch.softmax(y, -1).mul(torch.arange(4.0).to("flagos")).sum().backward()
        c = y.detach().t().clone(memory_format=torch.contiguous_format)
        print(json.dumps({"seen": flag_gems.seen, "grad": torch.allclose(y.grad.cpu(), x.grad),
                          "clone": [torch.equal(c.cpu(), x.detach().t()), c.is_contiguous()]}))
    """
    proc = run(code, FLAGOS_OP__softmax_backward_data="flaggems", FLAGOS_OP_clone="flaggems",
               PYTHONPATH=str(tmp_path))
    out = last_json(proc)
    assert out["seen"] == ["dtype", "memory_format"], out
    assert out["grad"] and out["clone"] == [True, True], out


def test_flaggems_layer_norm_backward_gets_its_input_as_rows(tmp_path):
    """FlagGems 5.0.2's native_layer_norm_backward takes input.shape[0] as its
    row count (FlagGems #5392): the route hands it a (rows, N) input and gives
    the input's gradient back in the input's shape. The stand-in below is
    right only for such an input, like FlagGems."""
    pkg = tmp_path / "flag_gems"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "seen = []\n"
        "def layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight=None, bias=None,\n"
        "                        output_mask=None):\n"
        "    M = input.shape[0]\n"
        "    N = input.numel() // M\n"
        "    seen.append([M, N])\n"
        "    c = lambda t: t.cpu()\n"
        "    g, w, b = torch.ops.aten.native_layer_norm_backward(c(grad_out).reshape(M, N), c(input).reshape(M, N),\n"
        "        [N], c(mean).reshape(M, 1), c(rstd).reshape(M, 1), c(weight), c(bias), output_mask)\n"
        "    return g.to(input.device), w.to(input.device), b.to(input.device)\n"
        "_FULL_CONFIG = [('native_layer_norm_backward', layer_norm_backward)]\n")
    code = """
        import json, torch, torch_fl, flag_gems
        torch.manual_seed(0)
        x, w, b, g = torch.randn(2, 3, 4), torch.randn(4), torch.randn(4), torch.randn(2, 3, 4)
        grads = {}
        for device in ("cpu", "flagos"):
            leaves = [t.to(device, copy=True).requires_grad_() for t in (x, w, b)]
            torch.nn.functional.layer_norm(leaves[0], (4,), leaves[1], leaves[2]).backward(g.to(device))
            grads[device] = [t.grad.cpu() for t in leaves]
        print(json.dumps({"seen": flag_gems.seen, "shape": list(grads["flagos"][0].shape),
                          "right": [torch.allclose(a, c, atol=1e-6) for a, c in zip(grads["flagos"], grads["cpu"])]}))
    """
    proc = run(code, FLAGOS_OP_native_layer_norm_backward="flaggems", PYTHONPATH=str(tmp_path))
    out = last_json(proc)
    assert out == {"seen": [[6, 4]], "shape": [2, 3, 4], "right": [True, True, True]}, out


def test_flaggems_flat_kernels_get_dense_operands_of_one_dtype(tmp_path):
    """FlagGems' Hopper functions (imported from a top-level `hopper`
    package), and a few generic ones, index operands flat. The stand-ins below
    do the same: they are right only for dense operands (slice_backward for a
    contiguous gradient), and mul only for one dtype on one device. The route
    hands them a strided slice contiguous, runs an in-place write on a
    contiguous copy of the slice, and hands mul its operands in the result
    dtype on the device (a Python number beside a 0-dim tensor included)."""
    flat = tmp_path / "hopper" / "ops"
    flat.mkdir(parents=True)
    (tmp_path / "hopper" / "__init__.py").write_text("")
    (flat / "__init__.py").write_text("")
    (flat / "flat.py").write_text(
        "import torch\n"
        "def _flat(t):  # element i at data_ptr + i, as a Triton flat kernel reads it\n"
        "    return torch.as_strided(t, (t.numel(),), (1,))\n"
        "def fill_scalar_(self, value):\n"
        "    _flat(self).copy_(torch.full((self.numel(),), float(value), dtype=self.dtype))\n"
        "    return self\n"
        "def sqrt(a):\n"
        "    return torch.sqrt(_flat(a).cpu()).reshape(a.shape).to(a.device)\n"
        "def sqrt_(a):\n"
        "    _flat(a).copy_(torch.sqrt(_flat(a).cpu()))\n"
        "    return a\n"
        "def mul(a, b):\n"
        "    if not isinstance(b, torch.Tensor):  # FlagGems' scalar path\n"
        "        return (a.cpu() * b).to(a.device)\n"
        "    assert a.device == b.device, 'a host pointer handed to a device kernel'\n"
        "    return (_flat(a).cpu() * _flat(b).cpu()).to(a.dtype).reshape(a.shape).to(a.device)\n")
    pkg = tmp_path / "flag_gems"
    pkg.mkdir()
    # zero_ and slice_backward: FlagGems' generic ones are flat too.
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "from hopper.ops.flat import _flat, fill_scalar_, mul, sqrt, sqrt_\n"
        "def zero_(x):\n"
        "    _flat(x).copy_(torch.zeros(x.numel(), dtype=x.dtype))\n"
        "    return x\n"
        "def slice_backward(grad, sizes, dim, start, end, step):\n"
        "    g = _flat(grad).cpu().reshape(grad.shape)  # row-major, as FlagGems reads it\n"
        "    out = torch.zeros(sizes, dtype=grad.dtype)\n"
        "    out.narrow(dim, start, g.shape[dim]).copy_(g)\n"
        "    return out.to(grad.device)\n"
        "_FULL_CONFIG = [('fill_.Scalar', fill_scalar_), ('sqrt', sqrt), ('sqrt_', sqrt_), ('mul.Tensor', mul),\n"
        "                ('zero_', zero_), ('slice_backward', slice_backward)]\n")
    code = """
        import json, torch, torch_fl
        x = torch.arange(1.0, 13.0).reshape(3, 4)
        y = x.to("flagos")
        y[:, 1].fill_(-1.0)
        y[:, 3].sqrt_()
        y[:, 0].zero_()
        want = x.clone()
        want[:, 1] = -1.0
        want[:, 3] = want[:, 3].sqrt()
        want[:, 0] = 0.0
        product = torch.mul(torch.arange(3).to("flagos"), torch.full((3,), 0.5).to("flagos"))
        loss = torch.tensor(3.0).to("flagos")
        scaled = [loss * 2.0, loss * torch.tensor(2.0, dtype=torch.float64)]  # a host operand, 0-dim
        leaf = torch.zeros(4, 3).to("flagos").requires_grad_()
        g = torch.arange(6.0).reshape(3, 2)
        leaf[1:3].backward(g.t().to("flagos"))  # a transposed gradient into slice_backward
        print(json.dumps({"slice": torch.equal(torch.sqrt(y[:, 2]).cpu(), x[:, 2].sqrt()),
                          "in place": torch.equal(y.cpu(), want),
                          "mul": [str(product.dtype), product.cpu().tolist()],
                          "scaled": [[str(t.device), str(t.dtype), t.item()] for t in scaled],
                          "slice_backward": leaf.grad.cpu().tolist()}))
    """
    proc = run(code, FLAGOS_OP_fill___Scalar="flaggems", FLAGOS_OP_sqrt="flaggems", FLAGOS_OP_sqrt_="flaggems",
               FLAGOS_OP_mul__Tensor="flaggems", FLAGOS_OP_zero_="flaggems", FLAGOS_OP_slice_backward="flaggems",
               PYTHONPATH=str(tmp_path))
    out = last_json(proc)
    assert out == {"slice": True, "in place": True, "mul": ["torch.float32", [0.0, 0.5, 1.0]],
                   "scaled": [["flagos:0", "torch.float32", 6.0], ["flagos:0", "torch.float64", 6.0]],
                   "slice_backward": [[0, 0, 0], [0, 2, 4], [1, 3, 5], [0, 0, 0]]}, out


def test_python_implementations_get_operands_in_the_form_flaggems_reads_right(tmp_path):
    """FlagGems 5.0.2's kernels misread some layouts on Hopper (natively
    too): a pointwise op's read-only operands of mixed shapes or layouts reach
    it contiguous at the shape they broadcast to (0-dim ones as they are), any
    other expanded operand compacted, the rest and what an op writes as they
    are."""
    pkg = tmp_path / "flag_gems"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "seen = []\n"
        "def mul(a, b):\n"
        "    seen.append([list(a.stride()), list(b.stride())])\n"
        "    return torch.mul(a.cpu(), b.cpu()).to(a.device)\n"
        "def mul_(a, b):\n"
        "    seen.append([list(a.stride()), list(b.stride())])\n"
        "    return a.copy_(torch.mul(a.cpu(), b.cpu()))\n"
        "def mul_out(a, b, *, out):\n"
        "    seen.append([list(a.stride()), list(b.stride())])\n"
        "    return out.resize_(a.shape).copy_(torch.mul(a.cpu(), b.cpu()))\n"
        "def cat(tensors, dim=0):\n"
        "    seen.append([list(t.stride()) for t in tensors])\n"
        "    return torch.cat([t.cpu() for t in tensors], dim).to(tensors[0].device)\n"
        "_FULL_CONFIG = [('mul.Tensor', mul), ('mul_.Tensor', mul_), ('mul.out', mul_out), ('cat', cat)]\n")
    code = """
        import json, torch, torch_fl, flag_gems
        x = torch.arange(6.0).reshape(2, 3)
        row, col, two = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[2.0], [3.0]]), torch.tensor(2.0)
        y, r, c, t = (v.to("flagos") for v in (x, row, col, two))
        w = torch.ones(3, 2).to("flagos").t()
        w.mul_(c)
        o = torch.mul(y.t(), y.t().contiguous(), out=torch.empty(0, device="flagos"))
        got = [torch.mul(y, r.expand(2, 3)), torch.mul(y.t(), y.t().contiguous()), torch.mul(y.t(), y.t()),
               torch.mul(y, c), torch.mul(y, t), torch.cat([y, r.expand(2, 3)]), torch.cat([y.t(), y.t()]), w]
        want = [x * row, (x * x).t(), (x * x).t(), x * col, x * two, torch.cat([x, row.expand(2, 3)]),
                torch.cat([x.t(), x.t()]), col.expand(2, 3)]
        a = x.to("flagos", copy=True).requires_grad_()
        a.mul(a).sum().backward()
        print(json.dumps({"seen": flag_gems.seen, "grad": torch.equal(a.grad.cpu(), 2 * x),
                          "out": torch.equal(o.cpu(), (x * x).t()),
                          "right": [torch.equal(g.cpu(), v) for g, v in zip(got, want)]}))
    """
    proc = run(code, FLAGOS_OP_mul__Tensor="flaggems", FLAGOS_OP_mul___Tensor="flaggems", FLAGOS_OP_mul__out="flaggems",
               FLAGOS_OP_cat="flaggems", PYTHONPATH=str(tmp_path))
    out = last_json(proc)
    assert out["right"] == [True] * 8 and out["grad"] and out["out"], out
    assert out["seen"] == [
        [[1, 2], [3, 1]],  # w.mul_(c): w, written, as it is; the column at w's shape
        [[2, 1], [2, 1]],  # out= of another size, which the op resizes: at the inputs' shape
        [[3, 1], [3, 1]],  # the expanded row, contiguous
        [[2, 1], [2, 1]],  # a transposed operand beside a contiguous one, contiguous
        [[1, 3], [1, 3]],  # operands of one layout as they are
        [[3, 1], [3, 1]],  # the column, at the shape it broadcasts to
        [[3, 1], []],      # a 0-dim operand as it is
        [[3, 1], [3, 1]],  # cat is not pointwise: its expanded operand compacted ...
        [[1, 3], [1, 3]],  # ... and transposed ones as they are
        [[3, 1], [3, 1]], [[3, 1], [3, 1]], [[3, 1], [3, 1]],  # a * a; the sum's expanded gradient times a, twice
    ], out


@pytest.mark.parametrize("route", ["cpu", "cpu_fallback"])
def test_an_op_given_two_devices_tensors_is_refused_on_every_route(route):
    """As native CUDA refuses them, in its words; test/torch/test_device.py
    has the in-process side (ops, foreach lists that span devices)."""
    code = """
        import torch, torch_fl
        a, b = torch.ones(2, device="flagos:0"), torch.ones(2, device="flagos:1")
        try:
            a + b
        except RuntimeError as exc:
            print(exc)
        print(torch_fl.routes("add.Tensor")[0]["route"], (a + b.to("flagos:0")).tolist())
    """
    proc = run(code, FLAGOS_OP_add__Tensor=route)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines() == [
        "[flagos] aten::add.Tensor: Expected all tensors to be on the same device, but found at least two devices, "
        "flagos:0 and flagos:1!", f"{route} [2.0, 2.0]"]


# -- FLAGOS_FORCE_BACKEND -----------------------------------------------------------------

def test_force_flaggems_repins_what_flaggems_implements_and_reports_the_rest_once(fake_flag_gems):
    code = ADD.replace('"route": torch_fl.routes("add.Tensor")[0]',
                       '"route": torch_fl.routes("add.Tensor")[0], "mm": torch_fl.routes("mm")[0]["route"]')
    proc = run(code, FLAGOS_FORCE_BACKEND="flaggems", FLAGOS_OP_add__Tensor="cpu_fallback", **fake_flag_gems)
    out = last_json(proc)
    assert out["same"] and out["calls"] == 2
    assert out["route"]["route"] == "flaggems"
    assert out["route"]["why"].startswith("FLAGOS_FORCE_BACKEND=flaggems over cpu_fallback (FLAGOS_OP_add__Tensor over cpu")
    assert out["mm"] == "cpu"  # not implemented by flaggems: left on its configured route
    lines = flagos_lines(proc.stderr)
    assert len(lines) == 1
    assert re.fullmatch(r"\[flagos\] FLAGOS_FORCE_BACKEND=flaggems: \d+ ops have no flaggems implementation and "
                        r"keep their configured route \(.*, \.\.\.\); torch_fl\.routes\(\) lists them", lines[0])


def test_force_vendor_on_host_takes_native_kernels_then_cpu():
    code = """
        import json, torch, torch_fl
        x = torch.randn(4, 4)
        ok = torch.equal((x.flagos() + x.flagos()).cpu(), x + x) and torch.equal((x.flagos() - 1).cpu(), x - 1)
        routes = torch_fl.routes()
        print(json.dumps({"ok": ok, "add": torch_fl.routes("add.Tensor")[0]["route"],
                          "sub": torch_fl.routes("sub.Tensor")[0]["route"],
                          "kinds": sorted({r["route"] for r in routes})}))
    """
    proc = run(code, FLAGOS_FORCE_BACKEND="vendor")
    out = last_json(proc)
    assert out == {"ok": True, "add": "native", "sub": "cpu", "kinds": ["cpu", "native"]}
    assert flagos_lines(proc.stderr) == []


def test_force_tileops_raises_for_an_annotated_op_it_cannot_run_here(tmp_path, confs):
    conf = tmp_path / "backends_tile.conf"
    conf.write_text(f"include {confs / 'host.toml'}\nbmm = cpu   # tileops\nmm = cpu   # tileops\n")
    code = """
        import json, torch, torch_fl
        x = torch.ones(1, 2, 2).flagos()
        try:
            torch.bmm(x, x)
        except RuntimeError as exc:
            error = str(exc)
        print(json.dumps({"error": error, "mm": torch.equal((x[0] @ x[0]).cpu(), torch.full((2, 2), 2.0)),
                          "add": torch.equal((x + x).cpu(), torch.full((1, 2, 2), 2.0)),
                          "why": torch_fl.tileops.unavailable_reason()}))
    """
    proc = run(code, FLAGOS_BACKEND_CONFIG=str(conf), FLAGOS_FORCE_BACKEND="tileops")
    out = last_json(proc)
    # bmm: TileOps implements it; the route cannot run on the host plugin
    # (not installed, not compiled, or not CUDA-ABI: whichever is checked first).
    assert out["why"]
    assert out["error"] == f"[flagos] aten::bmm is forced onto tileops by FLAGOS_FORCE_BACKEND=tileops, but {out['why']}"
    assert out["mm"] and out["add"]  # mm: annotated, no TileOps class; add: not annotated
    assert flagos_lines(proc.stderr) == [
        "[flagos] FLAGOS_FORCE_BACKEND=tileops: 1 ops have no tileops implementation and keep their configured "
        "route (mm); torch_fl.routes() lists them"]


def test_force_backend_invalid_value_is_one_line_and_changes_nothing():
    proc = run(ADD, FLAGOS_FORCE_BACKEND="cuda")
    out = last_json(proc)
    assert out["same"] and out["route"]["route"] == "cpu"
    assert flagos_lines(proc.stderr) == [
        "[flagos] FLAGOS_FORCE_BACKEND='cuda' is not one of flaggems, vendor, tileops; using the default (unset)"]


# -- FLAGOS_LOG ----------------------------------------------------------------------------

LOGGED = """
    import torch, torch_fl
    x = torch.tensor([1.0, 2.0]).to("flagos")
    for _ in range(3):
        x + x
    x * x
    print("done")
"""


def op_lines(stderr: str) -> list[str]:
    """The [flagos] lines about operators: without the dispatch channel's
    conf details (a shipped conf generated for another torch says so there)."""
    return [line for line in flagos_lines(stderr) if not line.startswith("[flagos] dispatch: routing conf ")]


def test_log_dispatch_one_line_per_op(confs):
    proc = run(LOGGED, FLAGOS_LOG="dispatch")
    assert proc.returncode == 0, proc.stderr
    host = confs / "host.toml"
    assert op_lines(proc.stderr) == [
        f"[flagos] dispatch: aten::add.Tensor -> cpu (conf {host}:{line_of(host, 'add.Tensor')})",
        f"[flagos] dispatch: aten::mul.Tensor -> cpu (conf {host}:{line_of(host, 'mul.Tensor')})",
    ]


def test_log_fallback_one_line_per_call_and_dispatch_with_it(confs):
    proc = run(LOGGED, FLAGOS_LOG="dispatch,fallback", FLAGOS_OP_add__Tensor="cpu_fallback")
    assert proc.returncode == 0, proc.stderr
    host = confs / "host.toml"
    assert op_lines(proc.stderr) == [
        f"[flagos] dispatch: aten::add.Tensor -> cpu_fallback (FLAGOS_OP_add__Tensor over cpu "
        f"(conf {host}:{line_of(host, 'add.Tensor')}))",
        "[flagos] cpu_fallback: aten::add.Tensor",
        "[flagos] cpu_fallback: aten::add.Tensor",
        "[flagos] cpu_fallback: aten::add.Tensor",
        f"[flagos] dispatch: aten::mul.Tensor -> cpu (conf {host}:{line_of(host, 'mul.Tensor')})",
    ]


def test_log_off_prints_nothing():
    proc = run(LOGGED, FLAGOS_OP_add__Tensor="cpu_fallback")
    assert proc.returncode == 0, proc.stderr
    assert flagos_lines(proc.stderr) == []


# -- the CLI ---------------------------------------------------------------------------------

def cli(*args: str, **env: str):
    return run_python("", env={**BASE, **env}, args=["-m", "torch_fl", *args])


def test_cli_routes_for_one_op(confs):
    proc = cli("routes", "--op", "add.Tensor")
    assert proc.returncode == 0, proc.stderr
    host = confs / "host.toml"
    lines = proc.stdout.splitlines()
    assert lines[0] == f"conf: {host}"
    assert lines[1] == f"default route (unlisted ops): cpu_fallback (conf default {host}:{default_line(host)})"
    assert lines[2].split() == ["add.Tensor", "cpu", "conf", f"{host}:{line_of(host, 'add.Tensor')}"]
    assert len(lines) == 3


def test_cli_routes_lists_every_route_with_counts(tmp_path):
    conf = tmp_path / "three.toml"
    conf.write_text('[routes]\n"neg" = "cpu"\n"abs" = "cpu"\n"add.Tensor" = "none"\n')
    proc = cli("routes", FLAGOS_BACKEND_CONFIG=str(conf))
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()[2:]
    assert [r.split()[:2] for r in rows[:-1]] == [["abs", "cpu"], ["add.Tensor", "none"], ["neg", "cpu"]]
    assert "[raises: aten::add.Tensor is not routed on flagos" in rows[1]
    assert rows[-1] == "routes: cpu 2, none 1"


def test_cli_conf_check_good_conf(tmp_path, confs):
    conf = tmp_path / "good.conf"
    conf.write_text(f"include {confs / 'host.toml'}\nmm = vendor\nadd.Tensor = cpu_fallback  # comment\n")
    proc = cli("conf", "check", str(conf))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    # host.toml was generated for one torch; against another, conf check
    # says in one note which of its ops this torch lacks or has no CPU kernel
    # for, if any: they are skipped.
    tag = re.search(r'^torch = "([^"]*)"', (confs / "host.toml").read_text(), re.M).group(1)
    lines = flagos_lines(proc.stderr)
    if tag.split("+")[0] != torch_release():
        assert len(lines) <= 1, lines
        assert all(line.startswith(f"[flagos] routing conf {conf} was generated for torch {tag}; ") for line in lines)
    else:
        assert lines == []
    notes = f", {len(lines)} notes" if lines else ""
    assert re.fullmatch(rf"{re.escape(str(conf))}: OK, \d+ routes \(cpu \d+, cpu_fallback 1, native 1\){notes}",
                        out), out


def test_cli_conf_check_reports_what_installing_would(tmp_path, hidden_flag_gems):
    conf = tmp_path / "notes.toml"
    conf.write_text('[routes]\n"add.Tensor" = "flaggems"\n')
    proc = cli("conf", "check", str(conf), **hidden_flag_gems)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{conf}: OK, 1 routes (cpu 1), 1 notes"
    assert flagos_lines(proc.stderr) == [
        f"[flagos] 1 routes to flaggems: {NOT_INSTALLED}; they run as cpu (add.Tensor)"]


def test_cli_conf_check_takes_the_rule_of_flagos_backend_config(tmp_path):
    # Both name a conf by an absolute path.
    (tmp_path / "rel.toml").write_text('[routes]\n"neg" = "cpu"\n')
    proc = subprocess.run([sys.executable, "-m", "torch_fl", "conf", "check", "rel.toml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=_clean_env(BASE))
    assert proc.returncode == 1
    assert flagos_lines(proc.stderr) == ["[flagos] the conf to check must be an absolute path, got 'rel.toml'"]
    proc = subprocess.run([sys.executable, "-c", "import torch_fl"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**_clean_env(BASE), "FLAGOS_BACKEND_CONFIG": "rel.toml"})
    assert proc.stderr.splitlines()[-1] == (
        "RuntimeError: [flagos] FLAGOS_BACKEND_CONFIG must be an absolute path, got 'rel.toml'")


def test_a_conf_with_no_routes_and_no_default_warns_once(tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_text("# nothing yet\n[conf]\n")
    note = (f"[flagos] routing conf {empty} lists no routes and no default: every operator takes cpu_fallback, "
            'a copy to the host and back (write [conf] default = "cpu_fallback" to mean it)')
    proc = run(ADD, FLAGOS_BACKEND_CONFIG=str(empty))
    assert proc.returncode == 0, proc.stderr
    assert flagos_lines(proc.stderr) == [note]
    proc = cli("conf", "check", str(empty))
    assert proc.stdout.strip() == f"{empty}: OK, 0 routes (), 1 notes"
    assert flagos_lines(proc.stderr) == [note]
    # A default, even cpu_fallback, says it is meant.
    chosen = tmp_path / "chosen.toml"
    chosen.write_text('[conf]\ndefault = "cpu_fallback"\n')
    proc = run(ADD, FLAGOS_BACKEND_CONFIG=str(chosen))
    assert proc.returncode == 0, proc.stderr
    assert flagos_lines(proc.stderr) == []


def test_cli_conf_check_bad_conf_exits_1_with_file_and_line(tmp_path):
    conf = tmp_path / "bad.toml"
    conf.write_text('[conf]\nplatform = "mine"\n\n[routes]\n"add.Tensor" = "cpu"\n"mm" = "gpu"\n')
    proc = cli("conf", "check", str(conf))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert flagos_lines(proc.stderr) == [
        f"[flagos] routing conf {conf}:6: unknown route 'gpu' for 'mm' (valid: {VALID})"]

