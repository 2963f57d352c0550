"""`python -m torch_fl conformance`: the kit a vendor team runs. It must pass
on the host plugin in both modes, write its JSON report, and fail (not crash)
on a broken plugin."""

import json

import pytest

from conftest import run_python


@pytest.mark.parametrize("strict", ["0", "1"])
def test_host_plugin_passes_conformance(tmp_path, strict):
    report = tmp_path / f"host-strict{strict}.json"
    proc = run_python("", args=["-m", "torch_fl", "conformance", "host",
                                "--option", f"strict={strict}", "--json", str(report)])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["summary"]["failed"] == 0
    assert data["summary"]["passed"] >= 50
    assert data["options"] == {"strict": strict}
    names = {g["name"] for g in data["groups"]}
    assert {"packaging", "handshake", "errors", "memory", "copies", "lifecycle"} <= names


def test_conformance_fails_a_plugin_of_the_wrong_major(tmp_path, fake_plugin):
    report = tmp_path / "bad.json"
    proc = run_python("", args=["-m", "torch_fl", "conformance", fake_plugin("wrong_major"),
                                "--json", str(report)])
    assert proc.returncode != 0
    data = json.loads(report.read_text())
    assert data["summary"]["failed"] >= 1


def test_conformance_names_an_unknown_plugin():
    proc = run_python("", args=["-m", "torch_fl", "conformance", "nosuchvendor"])
    assert proc.returncode == 2
    assert "[flagos] no plugin named 'nosuchvendor' is installed" in proc.stderr


def test_conformance_takes_a_plugin_name_in_any_case_and_never_the_working_directory(tmp_path, fake_plugin):
    from torch_fl import conformance

    host = conformance.resolve_plugin("host")
    assert conformance.resolve_plugin("HOST") == conformance.resolve_plugin("libflagos_host.so") == host
    (tmp_path / "libflagos_host.so").symlink_to(fake_plugin("wrong_major"))
    proc = run_python(f"""
        import os
        os.chdir({str(tmp_path)!r})
        from torch_fl import conformance
        print(conformance.resolve_plugin("libflagos_host.so"))
        print(conformance.resolve_plugin("./libflagos_host.so"))
    """)
    assert proc.stdout.splitlines() == [host, fake_plugin("wrong_major")]
