#include "routes/boxing.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/SmallVector.h>

#include <optional>

#include "aten/host_dtype_gaps.h"
#include "device/runtime.h"
#include "routes/boxed_args.h"
#include "routes/boxing_call.h"

namespace flagos::routes {

void run_boxed(BoxingTarget kind, const BoxingPlan& plan, torch::jit::Stack* stack,
               c10::function_ref<void(torch::jit::Stack*)> invoke, bool recycle_aliases) {
  const size_t num_args = plan.generator_arg.size();
  c10::IValue* args = &*(stack->end() - num_args);
  const auto found = find_device(args, num_args);
  BoxingCall call(kind, found ? *found : static_cast<c10::DeviceIndex>(device::current_device()), recycle_aliases);

  // Returns that are written arguments come back as the caller's own flagos
  // tensors: only those arguments are kept (each copy is a refcount).
  c10::SmallVector<c10::IValue, 8> originals(plan.keeps_originals ? num_args : 0);
  for (int16_t i : plan.return_of)
    if (i >= 0) originals[i] = args[i];
  auto next_written = plan.written.begin();
  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& v = args[i];
    const bool written = next_written != plan.written.end() && *next_written == static_cast<int16_t>(i);
    if (written) ++next_written;
    if (v.isTensor()) {
      v = call.box(v.toTensor(), written);
    } else if (v.isList()) {
      v = map_tensors(v, [&](const at::Tensor& t) { return call.box(t, written, /*in_list=*/true); });
    } else if (v.isDevice()) {
      v = call.box(v.toDevice());
    } else if (plan.generator_arg[i] && (v.isNone() || v.isGenerator())) {
      v = call.box_generator(v.isNone() ? std::nullopt : std::optional(v.toGenerator()));
    } else if (static_cast<int>(i) == plan.traits.dropout_arg && v.isDouble()) {
      call.note_dropout(v.toDouble());
    }
  }

  call.run(plan.traits, [&] { invoke(stack); });

  const size_t num_returns = plan.return_of.size();
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& out = (*stack)[stack->size() - num_returns + r];
    if (plan.return_of[r] >= 0) {
      out = originals[plan.return_of[r]];
    } else if (out.isTensor()) {
      require_strided_result(plan.traits.name, out.toTensor());
      out = stays_on_host(plan.traits.host_returns, r) ? call.keep_on_host(out.toTensor())
                                                      : call.unbox(std::move(out).toTensor());
    } else {
      out = map_tensors(out, [&](const at::Tensor& t) {
        require_strided_result(plan.traits.name, t);
        return call.unbox(t);
      });
    }
  }
}

at::Tensor boxed_view(const at::Tensor& t, BoxingTarget kind) {
  BoxingCall call(kind, t.device().index(), /*recycle_aliases=*/false);
  return call.box(t);
}

std::optional<BoxingTarget> stock_target(c10::DeviceIndex device) {
  if (device::has_capability(device, FLAGOS_CAP_CUDA_ABI))
    return c10::impl::hasDeviceGuardImpl(c10::kCUDA) ? std::optional(BoxingTarget::Cuda) : std::nullopt;
  if (device::has_capability(device, FLAGOS_CAP_HOST_ADDRESSABLE)) return BoxingTarget::Cpu;
  return std::nullopt;
}

void cpu_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack) {
  run_boxed(BoxingTarget::Cpu, plan, stack, [&](torch::jit::Stack* s) { aten::run_cpu_kernel(op, s); });
}

void cuda_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack) {
  run_boxed(BoxingTarget::Cuda, plan, stack, [&](torch::jit::Stack* s) {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CUDA), s);
  });
}

}  // namespace flagos::routes
