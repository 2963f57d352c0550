"""The child of `measure` (measure.py): runs one operator's OpInfo samples on
flagos and on the CPU and prints one verdict line. Its conf routes the
operator alone to `native`."""

from __future__ import annotations

import sys

import torch


def _to(value, device):
    """A copy of `value` with its tensors on `device` (always a copy: the
    in-place forms must not change the sample the other device runs)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone().to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _samples(infos):
    for info in infos:
        for dtype in (torch.float32, torch.int64):
            if dtype in info.supported_dtypes("cpu"):
                for s in info.sample_inputs("cpu", dtype):
                    yield info, dtype, s


def verdict(op: str) -> str:
    import torch_fl  # noqa: F401
    from torch.testing._internal.common_methods_invocations import op_db

    name, _, overload = op.partition(".")
    inplace = name.endswith("_") and not name.startswith("_")
    base = name.rstrip("_") if inplace else name
    # Every OpInfo of the name (div has one per rounding mode): a sample
    # reaching another overload runs on cpu_fallback and passes trivially.
    infos = [i for i in op_db if i.name == base]
    if not infos:
        return f"untested: no OpInfo named {base}"
    samples = 0
    for info, _dtype, s in _samples(infos):
        call = info.get_inplace() if inplace else info.op
        if call is None:
            continue
        args, kwargs = (s.input, *s.args), dict(s.kwargs)
        try:
            want = call(*_to(args, "cpu"), **_to(kwargs, "cpu"))
        except Exception:
            continue  # a sample the CPU refuses says nothing about the device
        dev_args, dev_kwargs = _to(args, "flagos"), _to(kwargs, "flagos")
        if overload == "out":
            if not isinstance(want, torch.Tensor):
                continue
            dev_kwargs["out"] = torch.empty_like(want, device="flagos")
        got = call(*dev_args, **dev_kwargs)
        torch.testing.assert_close(_to(got, "cpu"), want, equal_nan=True, msg=lambda m: f"{op}: {m}")
        samples += 1
    if samples == 0:
        return f"untested: no {base} OpInfo sample in float32 or int64" + (" in place" if inplace else "")
    return f"pass ({samples} samples)"


if __name__ == "__main__":
    try:
        print(verdict(sys.argv[1]))
    except Exception as e:  # the verdict, not a traceback: one line per operator
        print(f"fail: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
