"""At interpreter exit, wait for flagos' autograd device threads to let go of
the last backward pass.

torch runs a flagos backward on an autograd device thread, which drops the
pass (its GraphTask) a moment after the caller's backward() has returned.
The pass holds Python objects (torch 2.13 stashes a contextvars.Context in
it), so dropping it takes the GIL. If the interpreter is finalizing by then,
that thread is made to exit inside a C++ destructor and the process aborts:
"terminate called without an active exception" (pytorch #38230's family,
#190489 for this path; native CUDA is exposed the same way). Seen here as a
test child that printed its result and then aborted: 3 to 11 runs in a
hundred of a short backward script, four at a time on two cores.

What this does: an atexit handler (atexit runs before finalization) runs a
one-element backward on each flagos device, through the engine directly so
that no Python object rides in it. A device thread works through its queue
in order, so by the time that pass returns the earlier one has been dropped,
its Python objects freed while the GIL could still be taken; what the thread
drops afterwards holds none.
"""

from __future__ import annotations

import atexit

import torch

_registered = False


def _drain_autograd_threads() -> None:
    from torch_fl import flagos

    if not flagos.is_initialized():  # no flagos tensor, so no flagos backward
        return
    engine = torch.autograd.Variable._execution_engine
    for index in range(flagos.device_count()):
        try:
            # Values do not matter: empty tensors and a view run no kernel (no
            # route, no FlagGems compile at exit), yet the view's node runs on
            # the device's thread.
            leaf = torch.empty((), device=f"flagos:{index}", requires_grad=True)
            engine.run_backward((leaf.view(()),), (torch.empty((), device=f"flagos:{index}"),), False, False, (),
                                allow_unreachable=True, accumulate_grad=True)
        except Exception:  # a device gone bad: its thread has nothing left to drop here
            pass


def install() -> None:
    """Registers the handler once (torch_fl's import)."""
    global _registered
    if not _registered:
        atexit.register(_drain_autograd_threads)
        _registered = True
