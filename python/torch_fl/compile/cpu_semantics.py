"""Where a graph traced on flagos means something else once re-targeted to
the CPU (compile/host.py), and the rewrite that keeps its meaning.

- ``histc`` on integers: CUDA's kernel (and flagos's, core/aten/host_dtype_gaps.h)
  takes them, the CPU's does not. The node counts a float64 copy of its input
  (exact for the values and the counts) and answers in the input dtype.
- ``view`` of a tensor the CPU lays out differently: the graph's strides were
  flagos's; the CPU's kernels (convolution backward picks channels-last) can
  return a layout the view cannot be taken from. Such a view becomes a
  ``reshape``, which Inductor lowers the same way and which copies only when
  it must.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

aten = torch.ops.aten
_VIEWS = (aten.view.default, aten._unsafe_view.default)


def _val(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def integer_histc(gm: GraphModule) -> None:
    """Rewrites, in place, every histc of an integral tensor (see above)."""
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in (aten.histc.default,):
            continue
        src = _val(node.args[0])
        if not isinstance(src, torch.Tensor) or src.dtype.is_floating_point or src.dtype == torch.bool:
            continue
        with gm.graph.inserting_before(node):
            wide = gm.graph.call_function(torch.ops.prims.convert_element_type.default,
                                          (node.args[0], torch.float64))
        with gm.graph.inserting_after(node):
            back = gm.graph.call_function(torch.ops.prims.convert_element_type.default, (node, src.dtype))
        node.replace_all_uses_with(back, delete_user_cb=lambda user: user is not back)
        node.args = (wide,) + tuple(node.args[1:])
    gm.recompile()


class CpuFakeProp(FakeTensorProp):
    """FakeTensorProp on the re-targeted graph, turning a view the CPU's
    layout cannot give into a reshape (see above)."""

    def run_node(self, n: torch.fx.Node):
        try:
            return super().run_node(n)
        except (RuntimeError, ValueError):
            if n.op != "call_function" or n.target not in _VIEWS:
                raise
            n.target = aten.reshape.default
            return super().run_node(n)
