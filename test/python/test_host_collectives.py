"""The host plugin's FLAGOS_EXTENSION_COLLECTIVES across *processes*: two
interpreters load libflagos_host.so through ctypes (no core, no torch), join
one communicator over shared memory and all_reduce. The in-process cases
(threads as ranks, every op and dtype) are the conformance group
`collectives`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# One rank: python RANK_SCRIPT <plugin> <id hex or "make-id"> <rank> <nranks> <count> <options>
RANK_SCRIPT = textwrap.dedent(r'''
    import ctypes as C, json, sys, time

    plugin, id_hex, rank, nranks, count, options = sys.argv[1:7]
    rank, nranks, count = int(rank), int(nranks), int(count)
    lib = C.CDLL(plugin)

    FN = C.c_void_p
    API_FNS = ["last_error_message", "device_count", "get_device_properties", "get_device",
               "set_device", "device_synchronize", "mem_get_info", "device_can_access_peer",
               "mem_alloc", "mem_free", "host_alloc", "host_free", "pointer_get_attributes",
               "memcpy_sync", "memcpy_async", "memcpy_peer_async", "memset_async",
               "get_default_stream", "stream_create", "stream_destroy", "stream_query",
               "stream_synchronize"]
    class Api(C.Structure):
        _fields_ = [("struct_size", C.c_size_t), ("abi_major", C.c_uint32), ("abi_minor", C.c_uint32),
                    ("name", C.c_char_p), ("version", C.c_char_p), ("extensions", C.c_void_p)] + \
                   [(n, FN) for n in API_FNS]
    class HostInfo(C.Structure):
        _fields_ = [("struct_size", C.c_size_t), ("abi_major", C.c_uint32), ("abi_minor", C.c_uint32),
                    ("host_name", C.c_char_p), ("host_version", C.c_char_p), ("num_options", C.c_size_t),
                    ("option_keys", C.POINTER(C.c_char_p)), ("option_values", C.POINTER(C.c_char_p))]
    class Ext(C.Structure):
        _fields_ = [("struct_size", C.c_size_t), ("type", C.c_int32), ("version", C.c_uint32),
                    ("next", C.c_void_p)]
    class DType(C.Structure):
        _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]
    COLL_FNS = ["supports_dtype", "comm_id_create", "comm_create", "comm_destroy", "comm_abort",
                "comm_status", "all_reduce"]
    class Coll(C.Structure):
        _fields_ = [("base", Ext), ("reduce_ops", C.c_uint32)] + [(n, FN) for n in COLL_FNS]
    IdBytes = C.c_ubyte * 128
    S, P, V, U64 = C.c_int32, C.c_void_p, C.c_void_p, C.c_uint64

    pairs = [kv.split("=") for kv in options.split(",") if kv]
    keys = (C.c_char_p * max(1, len(pairs)))(*[k.encode() for k, _ in pairs])
    vals = (C.c_char_p * max(1, len(pairs)))(*[v.encode() for _, v in pairs])
    info = HostInfo(C.sizeof(HostInfo), 1, 2, b"test", b"0", len(pairs), keys, vals)
    api_p = C.POINTER(Api)()
    lib.flagos_plugin_get_api.restype = S
    assert lib.flagos_plugin_get_api(C.byref(info), C.byref(api_p)) == 0
    api = api_p.contents
    f = lambda name, *args: C.CFUNCTYPE(S, *args)(getattr(api, name))
    last_error = C.CFUNCTYPE(C.c_char_p)(api.last_error_message)
    ext = api.extensions
    coll = None
    while ext:
        e = Ext.from_address(ext)
        if e.type == 4:
            coll = Coll.from_address(ext)
        ext = e.next
    if coll is None:
        print(json.dumps({"extension": False})); sys.exit(0)
    g = lambda name, *args: C.CFUNCTYPE(S, *args)(getattr(coll, name))
    def ok(st, what):
        if st != 0:
            raise SystemExit(f"{what}: status {st}: {last_error().decode()}")

    cid = IdBytes()
    if id_hex == "make-id":
        ok(g("comm_id_create", C.POINTER(IdBytes))(C.byref(cid)), "comm_id_create")
        print(bytes(cid).hex()); sys.exit(0)
    C.memmove(cid, bytes.fromhex(id_hex), 128)
    comm = C.c_void_p()
    ok(g("comm_create", C.POINTER(IdBytes), S, S, S, U64, C.POINTER(C.c_void_p))(
        C.byref(cid), nranks, rank, 0, 20000, C.byref(comm)), "comm_create")
    nbytes = count * 4
    buf = C.c_void_p()
    ok(f("mem_alloc", S, U64, C.POINTER(C.c_void_p))(0, nbytes, C.byref(buf)), "mem_alloc")
    host = (C.c_float * count)(*[float((i % 7) + rank) for i in range(count)])
    memcpy_sync = f("memcpy_sync", V, V, U64, S)
    ok(memcpy_sync(buf, C.cast(host, V), nbytes, 1), "upload")
    stream = C.c_void_p()
    ok(f("get_default_stream", S, C.POINTER(C.c_void_p))(0, C.byref(stream)), "get_default_stream")
    all_reduce = g("all_reduce", V, V, U64, DType, S, V, V)
    sync = f("stream_synchronize", V)
    f32 = DType(2, 32, 1)
    ok(all_reduce(buf, buf, count, f32, 0, comm, stream), "all_reduce")
    ok(sync(stream), "stream_synchronize")
    ok(memcpy_sync(C.cast(host, V), buf, nbytes, 2), "download")
    want = [float(nranks * (i % 7) + nranks * (nranks - 1) // 2) for i in range(count)]
    correct = list(host) == want
    # Timing: in-place all_reduces of the same buffer.
    iters = 20
    ok(all_reduce(buf, buf, count, f32, 0, comm, stream), "all_reduce")
    ok(sync(stream), "stream_synchronize")
    t0 = time.perf_counter()
    for _ in range(iters):
        ok(all_reduce(buf, buf, count, f32, 0, comm, stream), "all_reduce")
    ok(sync(stream), "stream_synchronize")
    seconds = (time.perf_counter() - t0) / iters
    ok(g("comm_destroy", V)(comm), "comm_destroy")
    busbw = nbytes / seconds * 2 * (nranks - 1) / nranks / 1e9
    print(json.dumps({"extension": True, "correct": correct, "busbw_gbs": busbw}))
''')


def host_plugin() -> str:
    from torch_fl import conformance

    return conformance.resolve_plugin("host")


def run_ranks(tmp_path: Path, nranks: int, count: int, options: str = "") -> list[dict]:
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    plugin = host_plugin()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_")}
    made = subprocess.run([sys.executable, str(script), plugin, "make-id", "0", "1", "0", options],
                          capture_output=True, text=True, timeout=60, env=env)
    assert made.returncode == 0, made.stderr
    if made.stdout.startswith("{"):
        return [json.loads(made.stdout)]
    comm_id = made.stdout.strip()
    procs = [subprocess.Popen([sys.executable, str(script), plugin, comm_id, str(r), str(nranks),
                               str(count), options],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for r in range(nranks)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out))
    name = bytes.fromhex(comm_id).rstrip(b"\0").decode()
    assert not Path("/dev/shm", name).exists(), "the communicator's segment was not unlinked"
    return results


@pytest.mark.parametrize("options", ["", "strict=1"])
def test_two_processes_all_reduce(tmp_path, options):
    results = run_ranks(tmp_path, 2, (4 << 20) // 4 + 3, options)
    assert [r["correct"] for r in results] == [True, True]
    assert all(r["busbw_gbs"] > 0 for r in results)


def test_three_processes_all_reduce(tmp_path):
    results = run_ranks(tmp_path, 3, 100003)
    assert [r["correct"] for r in results] == [True, True, True]


def test_option_collectives_0_drops_the_extension(tmp_path):
    assert run_ranks(tmp_path, 2, 16, "collectives=0") == [{"extension": False}]
