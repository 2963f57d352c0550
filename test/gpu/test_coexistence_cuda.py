"""Native CUDA beside flagos in one process.

A process that imported torch_fl names PrivateUse1, and torch's autograd
engine then orders streams for flagos only (pytorch#161129): without
torch_fl._autograd a native CUDA backward fails `opt_ready_stream &&
opt_parent_stream`. These tests train native CUDA models in such a process
and compare them with the same steps in a child process that never imports
torch_fl (this file run as a script), and mix flagos and CUDA models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.gpu

STEPS = 3


def _gpt2():
    import transformers

    cfg = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=512, n_positions=64,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(cfg)


def _train(device: str, side_stream: bool = False) -> dict:
    """STEPS AdamW steps of a small GPT-2 on `device`: the losses and every
    parameter's sum afterwards (fp32, TF32 off, so both processes agree)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = _gpt2().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 512, (4, 32), generator=g).to(device)
    losses = []
    stream = torch.cuda.Stream() if side_stream and device == "cuda" else None
    for _ in range(STEPS):
        if stream is not None:  # forward and backward on a side stream
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                loss = model(ids, labels=ids).loss
                loss.backward()
            torch.cuda.current_stream().wait_stream(stream)
        else:
            loss = model(ids, labels=ids).loss
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    sums = {n: p.detach().double().sum().item() for n, p in model.named_parameters()}
    return {"losses": losses, "sums": sums}


def _without_torch_fl(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_")}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # torch_fl stays out of the child
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _same(a: dict, b: dict, rtol: float) -> None:
    assert a["losses"] == pytest.approx(b["losses"], rel=rtol)
    for name, value in a["sums"].items():
        assert value == pytest.approx(b["sums"][name], rel=rtol, abs=1e-4), name


def test_linear_backward_on_native_cuda():
    import torch_fl  # noqa: F401

    model = torch.nn.Linear(8, 1).cuda()
    x = torch.randn(4, 8, device="cuda")
    model(x).sum().backward()
    ref = torch.nn.Linear(8, 1)
    ref.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    ref(x.cpu()).sum().backward()
    torch.testing.assert_close(model.weight.grad.cpu(), ref.weight.grad)
    assert torch.accelerator.current_accelerator().type == "flagos"  # outside a backward


@pytest.mark.parametrize("side_stream", [False, True], ids=["current-stream", "side-stream"])
def test_gpt2_training_on_native_cuda_matches_a_process_without_torch_fl(side_stream):
    import torch_fl  # noqa: F401

    args = ["--train"] + (["--side-stream"] if side_stream else [])
    _same(_train("cuda", side_stream), _without_torch_fl(*args), rtol=1e-5)


def test_flagos_and_cuda_models_train_in_one_process():
    import torch_fl  # noqa: F401

    on_cuda, on_flagos = _train("cuda"), _train("flagos")
    again = _train("cuda")  # after a flagos backward, cuda still trains the same way
    _same(on_cuda, again, rtol=0)
    _same(on_flagos, on_cuda, rtol=2e-3)


def test_compiled_native_cuda_training_in_a_torch_fl_process():
    import torch_fl  # noqa: F401

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8)).cuda()
    ref = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8)).cuda()
    ref.load_state_dict(model.state_dict())
    x = torch.randn(32, 64, device="cuda")
    torch.compile(model)(x).square().mean().backward()
    ref(x).square().mean().backward()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=name)


if __name__ == "__main__":  # the reference side, in a process without torch_fl
    assert "torch_fl" not in sys.modules
    print(json.dumps(_train("cuda", side_stream="--side-stream" in sys.argv)))
