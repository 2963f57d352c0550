"""Every common torch.nn module runs forward and backward on flagos and
matches the CPU, and every ATen operator it reaches there has a kernel that
can serve flagos: one of its own on PrivateUse1 or a CPU kernel the routes
and the fallback run. Independent of OpInfo, which misses operators only
modules reach (the fused LSTM cell)."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

nn = torch.nn


class OnItself(nn.Module):
    """A module of several inputs given its one input for each."""

    def __init__(self, inner, times):
        super().__init__()
        self.inner, self.times = inner, times

    def forward(self, x):
        return self.inner(*([x] * self.times))

# name -> (module factory, input shape); the input is float32 unless noted.
MODULES = {
    "Linear": (lambda: nn.Linear(6, 4), (3, 6)),
    "Bilinear": (lambda: OnItself(nn.Bilinear(6, 6, 3), 2), (3, 6)),
    "Conv1d": (lambda: nn.Conv1d(2, 3, 3, padding=1), (2, 2, 8)),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3, stride=2), (2, 2, 8, 8)),
    "Conv3d": (lambda: nn.Conv3d(2, 2, 2), (1, 2, 4, 4, 4)),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2), (2, 2, 5, 5)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(6), (4, 6)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(2), (3, 2, 4, 4)),
    "LayerNorm": (lambda: nn.LayerNorm(6), (3, 6)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (2, 2, 4, 4)),
    "LocalResponseNorm": (lambda: nn.LocalResponseNorm(2), (2, 4, 3, 3)),
    "RMSNorm": (lambda: nn.RMSNorm(6), (3, 6)),
    "LSTM": (lambda: nn.LSTM(6, 4, num_layers=2), (5, 2, 6)),
    "GRU": (lambda: nn.GRU(6, 4, bidirectional=True), (5, 2, 6)),
    "RNN": (lambda: nn.RNN(6, 4, nonlinearity="relu"), (5, 2, 6)),
    "MultiheadAttention": (lambda: OnItself(nn.MultiheadAttention(8, 2), 3), (4, 2, 8)),
    "TransformerEncoderLayer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), (4, 2, 8)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), (2, 2, 6, 6)),
    "AvgPool2d": (lambda: nn.AvgPool2d(3, stride=2, padding=1), (2, 2, 6, 6)),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), (2, 2, 7, 7)),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(3), (2, 2, 7)),
    "Upsample": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    "PixelShuffle": (lambda: nn.PixelShuffle(2), (1, 8, 3, 3)),
    "Unfold": (lambda: nn.Unfold(2), (1, 2, 4, 4)),
    "Fold": (lambda: nn.Fold((3, 3), 2), (1, 8, 4)),
    "PReLU": (lambda: nn.PReLU(3), (2, 3, 4)),
    "GELU": (lambda: nn.GELU(approximate="tanh"), (3, 5)),
    "SiLU": (lambda: nn.SiLU(), (3, 5)),
    "Mish": (lambda: nn.Mish(), (3, 5)),
    "ELU": (lambda: nn.ELU(), (3, 5)),
    "Hardswish": (lambda: nn.Hardswish(), (3, 5)),
    "LogSoftmax": (lambda: nn.LogSoftmax(dim=1), (3, 5)),
    "CosineSimilarity": (lambda: OnItself(nn.CosineSimilarity(), 2), (3, 5)),
}

# name -> (loss, input shape, target maker)
LOSSES = {
    "CrossEntropyLoss": (nn.CrossEntropyLoss(label_smoothing=0.1), (4, 5), lambda: torch.tensor([0, 4, 2, 1])),
    "NLLLoss": (nn.NLLLoss(), (4, 5), lambda: torch.tensor([0, 4, 2, 1])),
    "MSELoss": (nn.MSELoss(), (4, 5), lambda: torch.randn(4, 5)),
    "SmoothL1Loss": (nn.SmoothL1Loss(), (4, 5), lambda: torch.randn(4, 5)),
    "BCEWithLogitsLoss": (nn.BCEWithLogitsLoss(), (4, 5), lambda: torch.rand(4, 5)),
    "KLDivLoss": (nn.KLDivLoss(reduction="batchmean"), (4, 5), lambda: torch.rand(4, 5).softmax(1)),
    "HuberLoss": (nn.HuberLoss(), (4, 5), lambda: torch.randn(4, 5)),
}


@pytest.fixture(autouse=True)
def full_precision():
    """On a CUDA-ABI plugin the routed convolutions and matmuls are cuDNN's and
    cuBLAS's: without TF32 they match the CPU to the tolerances below."""
    # cuDNN's flags through its context manager: torch.testing (test_opinfo.py,
    # in the same session) freezes direct assignment (disable_global_flags).
    cudnn = torch.backends.cudnn
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with cudnn.flags(enabled=cudnn.enabled, benchmark=cudnn.benchmark, deterministic=cudnn.deterministic,
                         allow_tf32=False):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


class Reached(TorchDispatchMode):
    """The ATen overloads a computation reaches below autograd."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func)
        return func(*args, **(kwargs or {}))


def served_on_flagos(op) -> bool:
    name = op.name()
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return any(has(name, key) for key in ("PrivateUse1", "CPU", "CompositeExplicitAutograd",
                                          "CompositeExplicitAutogradNonFunctional"))


def run(module, x, target=None):
    out = module(x) if target is None else module(x, target)
    out = out[0] if isinstance(out, tuple) else out
    out.float().square().mean().backward()
    return out


def check(make, x_cpu, target=None):
    torch.manual_seed(0)
    cpu = make if isinstance(make, nn.Module) else make()
    dev = (make if isinstance(make, nn.Module) else make()).to("flagos")
    if list(cpu.state_dict()):
        dev.load_state_dict(cpu.state_dict())
    x_dev = x_cpu.detach().to("flagos").requires_grad_()
    x_cpu = x_cpu.detach().requires_grad_()
    out_cpu = run(cpu, x_cpu, target)
    with Reached() as reached:
        out_dev = run(dev, x_dev, None if target is None else target.to("flagos"))
    torch.testing.assert_close(out_dev.cpu(), out_cpu, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(x_dev.grad.cpu(), x_cpu.grad, atol=1e-4, rtol=1e-4)
    for (n, p), q in zip(cpu.named_parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-4, rtol=1e-4, msg=n)
    for (n, b), c in zip(cpu.named_buffers(), dev.buffers()):
        torch.testing.assert_close(c.cpu(), b, msg=n)
    unserved = sorted(str(op) for op in reached.ops if not served_on_flagos(op))
    assert not unserved, f"reached on flagos with no kernel that serves it: {unserved}"


@pytest.mark.parametrize("name", MODULES)
def test_module_matches_the_cpu(name):
    make, shape = MODULES[name]
    torch.manual_seed(1)
    check(make, torch.randn(*shape))


@pytest.mark.parametrize("name", LOSSES)
def test_loss_matches_the_cpu(name):
    loss, shape, target = LOSSES[name]
    torch.manual_seed(1)
    check(loss, torch.randn(*shape), target())


def test_embedding_matches_the_cpu():
    torch.manual_seed(0)
    cpu = nn.Embedding(10, 4)
    dev = nn.Embedding(10, 4).to("flagos")
    dev.load_state_dict(cpu.state_dict())
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    cpu(idx).square().sum().backward()
    dev(idx.to("flagos")).square().sum().backward()
    torch.testing.assert_close(dev.weight.grad.cpu(), cpu.weight.grad)


def test_data_parallel_over_a_flagos_module_runs_it_on_its_device():
    # DataParallel's replication is CUDA-only: on flagos it keeps its own
    # one-device behaviour (inputs moved to the module's device).
    torch.manual_seed(0)
    plain = nn.Linear(4, 2).to("flagos")
    wrapped = nn.DataParallel(plain)
    x = torch.randn(3, 4)
    out = wrapped(x)
    assert out.device == plain.weight.device
    torch.testing.assert_close(out.cpu(), plain.cpu()(x))
