"""Flagos tensors between processes: torch.multiprocessing queues and pipes,
``mp.spawn`` arguments, DataLoader workers (docs/multiprocessing.md).

torch pickles a tensor as its storage plus geometry, and a storage through
the reducer registered for ``torch.UntypedStorage``, which knows CPU and
CUDA only (``_share_fd_: only available on CPU``). ``install`` puts a reducer
in front of it that sends a flagos storage as a handle of the plugin's
FLAGOS_EXTENSION_IPC instead: the receiver maps the same device memory, so
writes on either side are seen by the other, as with CUDA tensors. The
host plugin backs it with shared memory (the storage moves there at its
first send, as torch moves CPU storages); CUDA-ABI plugins use the
runtime's IPC handles. A plugin without the extension refuses with one
``[flagos]`` line when the tensor is pickled.

The sender keeps the tensor alive while receivers use it (CUDA's rule), and
finishes the writes it wants seen before sending (the current stream is
synchronized at pickling).
"""

from __future__ import annotations

import multiprocessing.reduction
import os

import torch
import torch.multiprocessing.reductions as _reductions

from torch_fl import _C

_torch_reduce_storage = None


def _key(handle: bytes, offset: int, nbytes: int) -> tuple:
    return ("flagos", handle, offset, nbytes)


def rebuild_storage(cls, device: int, handle: bytes, alloc_size: int, fd, offset: int,
                    nbytes: int):
    """Unpickles a flagos storage sent by ``reduce_storage``: the storage
    already known in this process (the sender's own, or one received before),
    else a new mapping of the sender's memory."""
    own_fd = fd.detach() if fd is not None else -1
    try:
        key = _key(handle, offset, nbytes)
        storage = _reductions.storage_from_cache(cls, key)
        if storage is not None:
            return storage
        import torch_fl.flagos as flagos

        flagos._lazy_init()
        storage = _C._open_shared_storage(device, handle, alloc_size, own_fd, offset,
                                          nbytes).untyped_storage()
        _reductions.shared_cache[key] = _reductions.StorageWeakRef(storage)
        return storage
    finally:
        if own_fd >= 0:
            os.close(own_fd)


def reduce_storage(storage):
    """The reducer for ``torch.UntypedStorage``: flagos storages as IPC
    handles, every other storage as torch reduces it."""
    if storage.device.type != "flagos":
        return _torch_reduce_storage(storage)
    if storage.nbytes() == 0:
        return (_reductions.rebuild_storage_empty, (type(storage),))
    device, handle, alloc_size, fd, offset, nbytes = _C._share_storage(storage)
    # The descriptor travels by SCM_RIGHTS (the plugin keeps its own).
    shared_fd = multiprocessing.reduction.DupFd(fd) if fd >= 0 else None
    _reductions.shared_cache[_key(handle, offset, nbytes)] = _reductions.StorageWeakRef(storage)
    return (rebuild_storage, (type(storage), device, handle, alloc_size, shared_fd, offset, nbytes))


def install() -> None:
    """Registers ``reduce_storage`` with multiprocessing's ForkingPickler (once)."""
    global _torch_reduce_storage
    pickler = multiprocessing.reduction.ForkingPickler
    current = pickler._extra_reducers.get(torch.UntypedStorage)
    if current is reduce_storage:
        return
    _torch_reduce_storage = current or _reductions.reduce_storage
    pickler.register(torch.UntypedStorage, reduce_storage)
