// The `native` route: the plugin's kernel extension (include/flagos/ext/
// kernels.h). Plugins implement out= overloads only; the core derives the
// functional form (shapes from the Meta kernel, outputs from the flagos
// allocator) and the in-place form (out = self) from them.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flagos/ext/kernels.h"

namespace flagos::routes {

struct NativeKernel {
  const flagos_kernel_t* kernel = nullptr;
  c10::OperatorHandle out_op;  // the out= overload the kernel implements
  enum class Form { Out, Functional, Inplace } form = Form::Out;
};

// Schema strings of the active plugin's kernel extension (empty without one).
std::vector<std::string> plugin_kernel_schemas();

// Hits and misses of one plugin kernel's own cache (flagos_kernel_t.cache_stats).
struct KernelCacheStats {
  std::string op;  // the out= overload, e.g. "aten::add.out"
  uint64_t hits = 0;
  uint64_t misses = 0;
};
// The statistics of every active-plugin kernel that reports them (sorted by op).
std::vector<KernelCacheStats> kernel_cache_stats();

// The plugin kernel serving `op_name` ("add.Tensor", "add_.Tensor",
// "add.out"), if the active plugin has one for it.
std::optional<NativeKernel> find_native(const std::string& op_name);

// Runs the kernel. Returns false, with the stack untouched, when the call is
// outside what the kernel handles (non-flagos operands, an argument type the
// ABI cannot carry, or FLAGOS_ERROR_UNSUPPORTED from the plugin): the caller
// then takes the op's next route.
bool run_native(const NativeKernel& k, const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace flagos::routes
