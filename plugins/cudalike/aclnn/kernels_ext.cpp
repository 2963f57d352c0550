// FLAGOS_EXTENSION_KERNELS for the ascend plugin: the rows of ops.h, each run
// as aclnn's two phases through the executor cache, on the call's stream,
// with workspace from the core's caching allocator (host services). Built
// when FLAGOS_BUILD_VENDOR is on; plugins/cudalike/no_kernels.cpp otherwise.
#include <array>
#include <atomic>
#include <utility>

#include "aclnn/executor_cache.h"
#include "aclnn/library.h"
#include "aclnn/operands.h"
#include "aclnn/ops.h"
#include "api.h"
#include "device_scope.h"
#include "errors.h"
#include "flagos/ext/kernels.h"
#include "flagos/kit/host_services.hpp"
#include "handles.h"

namespace flagos_cudalike {
namespace aclnn {
namespace {

using Launch = Status (*)(void* workspace, uint64_t workspace_size, aclOpExecutor*, void* stream);
using PrepareUnary = Status (*)(const aclTensor*, aclTensor*, uint64_t*, aclOpExecutor**);
using PrepareBinary = Status (*)(const aclTensor*, const aclTensor*, aclTensor*, uint64_t*, aclOpExecutor**);
using PrepareAlpha = Status (*)(const aclTensor*, const aclTensor*, const aclScalar*, aclTensor*, uint64_t*,
                                aclOpExecutor**);
using PrepareMatmul = Status (*)(const aclTensor*, const aclTensor*, aclTensor*, int8_t, uint64_t*, aclOpExecutor**);
constexpr int8_t kKeepDtype = 0;  // cubeMathType KEEP_DTYPE: no reduced-precision matmul

std::atomic<uint64_t> g_hits[kNumOps];
std::atomic<uint64_t> g_misses[kNumOps];

// Asks aclnn to prepare `op` for `o`: the objects it made, the executor
// (repeatable) and its workspace size; a refusal is kept with its reason.
Prepared prepare(const Library& lib, const Op& op, const Operands& o) {
  Prepared p;
  for (const TensorOperand& t : o.inputs) p.inputs.push_back(create_tensor(lib, t));
  p.outputs.push_back(create_tensor(lib, o.out));
  if (o.alpha_type >= 0) {
    int64_t i = o.alpha_int;
    double f = o.alpha_double;
    p.scalar = lib.create_scalar(o.alpha_type == kInt64 ? static_cast<void*>(&i) : static_cast<void*>(&f),
                                 o.alpha_type);
  }
  const std::string prepare_name = std::string(op.name) + "GetWorkspaceSize";
  void* fn = lib.symbol(prepare_name);
  Status st = -1;
  if (fn == nullptr) {
    p.declined = lib.path + " has no " + prepare_name;
  } else {
    aclTensor* out = p.outputs[0];
    switch (op.shape) {
      case Shape::kUnary:
        st = reinterpret_cast<PrepareUnary>(fn)(p.inputs[0], out, &p.workspace, &p.executor);
        break;
      case Shape::kBinary:
        st = reinterpret_cast<PrepareBinary>(fn)(p.inputs[0], p.inputs[1], out, &p.workspace, &p.executor);
        break;
      case Shape::kBinaryAlpha:
        st = reinterpret_cast<PrepareAlpha>(fn)(p.inputs[0], p.inputs[1], p.scalar, out, &p.workspace, &p.executor);
        break;
      case Shape::kMatmul:
        st = reinterpret_cast<PrepareMatmul>(fn)(p.inputs[0], p.inputs[1], out, kKeepDtype, &p.workspace,
                                                 &p.executor);
        break;
    }
    if (st != 0) p.declined = prepare_name + " returned " + std::to_string(st) + ": " + lib.recent();
  }
  if (st == 0 && lib.set_repeatable(p.executor) != 0) {
    p.declined = "aclSetAclOpExecutorRepeatable failed: " + lib.recent();
    st = -1;
  }
  if (st != 0) {
    std::string why = std::move(p.declined);
    release(lib, &p, false);  // a failed preparation leaves no executor of ours to destroy
    p.declined = std::move(why);
  }
  return p;
}

// Points a cached executor at this call's memory.
flagos_status_t rebind(const char* fn, const Library& lib, Prepared& p, const Operands& o) {
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (lib.set_input_addr(p.executor, i, p.inputs[i], o.inputs[i].storage) != 0)
      return fail(FLAGOS_ERROR_DEVICE, "%s: aclSetInputTensorAddr(%zu) failed: %s", fn, i, lib.recent().c_str());
  if (lib.set_output_addr(p.executor, 0, p.outputs[0], o.out.storage) != 0)
    return fail(FLAGOS_ERROR_DEVICE, "%s: aclSetOutputTensorAddr(0) failed: %s", fn, lib.recent().c_str());
  return FLAGOS_SUCCESS;
}

// Enqueues one launch with `p.workspace` bytes from the core, given back in
// stream order right after.
flagos_status_t launch(const char* fn, const Library& lib, const Op& op, const Prepared& p,
                       const flagos_kernel_call_t* call, rt_stream stream) {
  auto run = reinterpret_cast<Launch>(lib.symbol(op.name));
  if (run == nullptr) return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: %s has no %s", fn, lib.path.c_str(), op.name);
  void* workspace = nullptr;
  const flagos_host_services_t* s = flagos::kit::host_services();
  if (p.workspace > 0) {
    if (s == nullptr || !FLAGOS_HAS_FN(flagos_host_services_t, s, workspace_alloc) ||
        !FLAGOS_HAS_FN(flagos_host_services_t, s, workspace_free))
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: %s needs %llu bytes of workspace and the host lends none", fn,
                  op.name, static_cast<unsigned long long>(p.workspace));
    flagos_status_t st = s->workspace_alloc(s->context, call->device, call->stream, p.workspace, &workspace);
    if (st == FLAGOS_ERROR_OUT_OF_MEMORY)  // this kernel's limit: the next route may need less
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: no %llu bytes of workspace for %s", fn,
                  static_cast<unsigned long long>(p.workspace), op.name);
    if (st != FLAGOS_SUCCESS)
      return fail(st, "%s: the core's workspace_alloc of %llu bytes failed", fn,
                  static_cast<unsigned long long>(p.workspace));
  }
  const Status err = run(workspace, p.workspace, p.executor, stream);
  if (workspace != nullptr) s->workspace_free(s->context, workspace);
  if (err != 0) return fail(FLAGOS_ERROR_DEVICE, "%s: %s failed (%d): %s", fn, op.name, err, lib.recent().c_str());
  return FLAGOS_SUCCESS;
}

flagos_status_t run_op(size_t index, const flagos_kernel_call_t* call) {
  const Op& op = kOps[index];
  const char* fn = op.name;
  return guarded(fn, [&]() -> flagos_status_t {
    Operands o;
    if (flagos_status_t st = read_operands(fn, op.shape, call, &o); st != FLAGOS_SUCCESS) return st;
    if (o.out.numel == 0) return FLAGOS_SUCCESS;  // nothing to compute
    for (const TensorOperand& t : o.inputs)  // no storage to point an executor at (mm's k = 0)
      if (t.numel == 0) return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: an input has no elements", fn);
    if (out_overlaps_input(op.shape, o))
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: out shares memory with an input", fn);
    if (flagos_status_t st = runtime_ready(fn); st != FLAGOS_SUCCESS) return st;
    flagos_status_t st = FLAGOS_SUCCESS;
    const Library* lib = load_library(fn, &st);
    if (lib == nullptr) return FLAGOS_ERROR_UNSUPPORTED;  // no aclnn: the op's next route serves it
    std::shared_ptr<Stream> stream;
    if ((st = streams().find(fn, call->stream, &stream)) != FLAGOS_SUCCESS) return st;
    if (stream->device() != call->device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the stream is on device %d, the call on device %d", fn,
                  stream->device(), call->device);
    DeviceScope scope;
    rt_stream native = nullptr;
    if ((st = stream->enter(fn, scope, &native)) != FLAGOS_SUCCESS) return st;

    ExecutorCache& cache = executor_cache();
    std::lock_guard<std::mutex> lock(cache.mutex());
    const std::string key = std::string(1, static_cast<char>(index)) + o.key;
    Prepared* p = cache.find(call->device, key);
    if (p == nullptr) {
      p = cache.insert(*lib, call->device, key, prepare(*lib, op, o), [] { rt().device_synchronize(); });
      if (p->executor != nullptr) g_misses[index].fetch_add(1, std::memory_order_relaxed);
    } else if (p->executor != nullptr) {
      g_hits[index].fetch_add(1, std::memory_order_relaxed);
    }
    if (p->executor == nullptr) return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: %s", fn, p->declined.c_str());
    if ((st = rebind(fn, *lib, *p, o)) != FLAGOS_SUCCESS) return st;
    return launch(fn, *lib, op, *p, call, native);
  });
}

template <size_t I>
flagos_status_t run(const flagos_kernel_call_t* call) {
  return run_op(I, call);
}

template <size_t I>
void stats(uint64_t* hits, uint64_t* misses) {
  if (hits != nullptr) *hits = g_hits[I].load(std::memory_order_relaxed);
  if (misses != nullptr) *misses = g_misses[I].load(std::memory_order_relaxed);
}

template <size_t... I>
constexpr std::array<flagos_kernel_t, kNumOps> make_kernels(std::index_sequence<I...>) {
  return {flagos_kernel_t{sizeof(flagos_kernel_t), kOps[I].schema, &run<I>, &stats<I>}...};
}

constexpr std::array<flagos_kernel_t, kNumOps> kKernels = make_kernels(std::make_index_sequence<kNumOps>{});

}  // namespace
}  // namespace aclnn

const flagos_extension_t* kernels_extension() {
  static const flagos_kernel_t* pointers[aclnn::kNumOps];
  static const flagos_kernels_ext_t ext = [] {
    for (size_t i = 0; i < aclnn::kNumOps; ++i) pointers[i] = &aclnn::kKernels[i];
    return flagos_kernels_ext_t{
        {sizeof(flagos_kernels_ext_t), FLAGOS_EXTENSION_KERNELS, FLAGOS_KERNELS_EXT_VERSION, graphs_extension()},
        aclnn::kNumOps, pointers};
  }();
  return &ext.base;
}

}  // namespace flagos_cudalike
