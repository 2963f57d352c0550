"""FLAGOS_ALIAS_CUDA: the ``cuda`` device string means flagos.

torch parses device strings in C++ with a fixed table, so the alias is made
at the Python entry points a CUDA script passes "cuda" through (docs/compat.md
lists them, their cost and what they cannot catch):

  device arguments        "cuda[:i]" and torch.device("cuda", i) objects
                          (torch.device and torch.Generator stay torch's
                          types: Dynamo and Inductor key tables on them)
  factories               torch.empty/zeros/randn/arange/tensor/... and
                          Tensor.new_*: a ``device=`` keyword
  Tensor.to, Module.to    a device argument, positional or keyword
  torch.set_default_device, ``with torch.device(...)``   the default device
  Tensor.cuda, Module.cuda, storage .cuda()   flagos' own .flagos()
  torch.autocast / torch.amp.GradScaler       device_type "cuda"
  torch.load              map_location "cuda[:i]", a cuda device or a dict
                          of them; and checkpoints whose storages were saved
                          on cuda load onto flagos

Ops that take no device (``x + y``, every kernel call) go through none of
these, so they cost nothing more.
"""

from __future__ import annotations

import functools
import inspect

import torch

# torch functions with a ``device=`` keyword a script passes "cuda" to.
FACTORIES = (
    "arange", "as_tensor", "asarray", "bartlett_window", "blackman_window", "empty", "empty_like",
    "empty_permuted", "empty_strided", "eye", "full", "full_like", "hamming_window", "hann_window",
    "kaiser_window", "linspace", "logspace", "normal", "ones", "ones_like", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "range", "scalar_tensor",
    "sparse_coo_tensor", "sparse_csr_tensor", "tensor", "tril_indices", "triu_indices", "zeros",
    "zeros_like",
)
TENSOR_FACTORIES = ("new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros")

_native_device = torch.device
_installed = False


def _flagos(device):
    """``device`` with cuda read as flagos; anything else unchanged."""
    if isinstance(device, str):
        if device == "cuda" or device.startswith("cuda:"):
            return "flagos" + device[4:]
        return device
    if isinstance(device, _native_device) and device.type == "cuda":
        return _native_device("flagos", device.index)
    return device


def _with_device_keyword(fn, method: str | None = None):
    @functools.wraps(fn)
    def aliased(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _flagos(kwargs["device"])
        if method is not None and torch.compiler.is_compiling():  # the form Dynamo maps to the method
            return getattr(super(torch.Tensor, args[0]), method)(*args[1:], **kwargs)
        return fn(*args, **kwargs)

    return aliased


def _tensor_to(fn):
    @functools.wraps(fn)
    def to(self, *args, **kwargs):
        if args and isinstance(args[0], (str, _native_device)):
            args = (_flagos(args[0]),) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = _flagos(kwargs["device"])
        if torch.compiler.is_compiling():  # the form Dynamo maps to the tensor method
            return super(torch.Tensor, self).to(*args, **kwargs)
        return fn(self, *args, **kwargs)

    return to


def _cuda_method(flagos_method):
    """``.cuda(device=None, ...)`` as ``.flagos(...)``, an int or "cuda:i" naming the ordinal."""

    def cuda(self, device=None, *args, **kwargs):
        device = _flagos(device)
        if isinstance(device, (str, _native_device)):
            device = _native_device(device).index
        return flagos_method(self, device, *args, **kwargs)

    cuda.__doc__ = f"Moves to flagos (FLAGOS_ALIAS_CUDA): {flagos_method.__qualname__}."
    return cuda


def _device_type_init(cls, keyword: str):
    """A class whose ``__init__`` takes the device type first (autocast,
    GradScaler, whose default is "cuda")."""
    init = cls.__init__
    default = inspect.signature(init).parameters[keyword].default

    @functools.wraps(init)
    def aliased(self, *args, **kwargs):
        if args:
            if args[0] == "cuda":
                args = ("flagos",) + args[1:]
        elif kwargs.get(keyword, default) == "cuda":
            kwargs[keyword] = "flagos"
        init(self, *args, **kwargs)

    return aliased


def _device_context_init(init):
    """DeviceContext (torch.set_default_device, ``with torch.device(...)``):
    its device, which may be "cuda[:i]" or a cuda device."""
    @functools.wraps(init)
    def aliased(self, device):
        init(self, _flagos(device))

    return aliased


def _map_location(location):
    if isinstance(location, dict):
        return {k: _flagos(v) for k, v in location.items()}
    return _flagos(location)


def _load(fn):
    @functools.wraps(fn)
    def load(f, map_location=None, *args, **kwargs):
        return fn(f, _map_location(map_location), *args, **kwargs)

    return load


def _restore_cuda_location(obj, location: str):
    """Storages saved on cuda (no map_location) come back on flagos."""
    if location == "cuda" or location.startswith("cuda:"):
        return obj.flagos(_native_device("flagos" + location[4:]).index)
    return None


def install() -> None:
    """Installs the alias (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    from torch.jit import _builtins
    from torch.utils import _device

    # torch.set_default_device and `with torch.device(...)` add the device to
    # the factories in torch's table (cached once): eager calls reach the mode
    # as the originals the wrappers call, compiled ones as the wrappers Dynamo
    # traced through, so the table holds both.
    constructors = _device._device_constructors()
    _device.DeviceContext.__init__ = _device_context_init(_device.DeviceContext.__init__)
    for name in FACTORIES:
        if hasattr(torch, name):
            original = getattr(torch, name)
            wrapper = _with_device_keyword(original)
            setattr(torch, name, wrapper)
            if original in constructors:
                constructors.add(wrapper)
            # TorchScript compiles a call to the wrapper as the aten op the
            # original is, instead of failing to read a builtin's source.
            op = _builtins._find_builtin(original)
            if op is not None:
                _builtins._register_builtin(wrapper, op)
    for name in TENSOR_FACTORIES:
        setattr(torch.Tensor, name, _with_device_keyword(getattr(torch.Tensor, name), name))
    torch.Tensor.to = _tensor_to(torch.Tensor.to)
    torch.Tensor.cuda = _cuda_method(torch.Tensor.flagos)
    torch.nn.Module.cuda = _cuda_method(torch.nn.Module.flagos)
    for storage in (torch.UntypedStorage, torch.TypedStorage):
        storage.cuda = _cuda_method(storage.flagos)
    autocast = torch.amp.autocast_mode.autocast
    autocast.__init__ = _device_type_init(autocast, "device_type")
    from torch.amp import grad_scaler

    grad_scaler.GradScaler.__init__ = _device_type_init(grad_scaler.GradScaler, "device")
    torch.load = _load(torch.load)
    # Before torch's own cuda entry (priority 20), which would need a CUDA build.
    torch.serialization.register_package(19, lambda obj: None, _restore_cuda_location)
