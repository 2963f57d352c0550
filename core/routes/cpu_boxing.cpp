#include "routes/cpu_boxing.h"

#include <ATen/ATen.h>
#include <c10/util/SmallVector.h>

#include "aten/transfer.h"
#include "device/device_allocator.h"
#include "device/generator.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "routes/boxed_args.h"
#include "routes/host_allocation.h"

namespace flagos::routes {
namespace {

const c10::DispatchKeySet kCpuKeys(c10::DispatchKey::CPU);

struct Alias {
  at::Tensor flagos;
  at::Tensor cpu;
  c10::StorageImpl* storage;  // the alias storage as created
};

at::Tensor cpu_alias(const at::Tensor& t) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  // Non-owning: the flagos tensor, alive on the caller's stack, owns the bytes.
  c10::DataPtr view(impl->mutable_data(), c10::Device(c10::kCPU));
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), impl->nbytes(),
                                                       std::move(view), flagos_as_cpu_allocator(),
                                                       impl->resizable());
  auto alias = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(std::move(storage)), kCpuKeys, t.dtype());
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  if (t.is_conj()) alias._set_conj(true);
  if (t.is_neg()) alias._set_neg(true);
  return alias;
}

// A CPU-labelled result whose bytes are flagos memory becomes a flagos tensor.
at::Tensor relabel(const at::Tensor& cpu, c10::DeviceIndex device) {
  c10::StorageImpl* impl = cpu.storage().unsafeGetStorageImpl();
  impl->mutable_data_ptr().unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device));
  impl->set_allocator(device::allocator());
  auto out = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(cpu.storage()),
                                                      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                      cpu.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(cpu.sizes(), cpu.strides(), cpu.storage_offset());
  return out;
}

at::Tensor on_flagos_storage(const at::Tensor& view, const Alias& a) {
  auto out = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(a.flagos.storage()),
                                                      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                      view.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(view.sizes(), view.strides(), view.storage_offset());
  if (view.is_conj()) out._set_conj(true);
  if (view.is_neg()) out._set_neg(true);
  return out;
}

at::Tensor to_flagos(const at::Tensor& cpu, c10::DeviceIndex device,
                     const c10::SmallVector<Alias, 4>& aliases) {
  if (!cpu.defined() || cpu.device().type() != c10::kCPU) return cpu;
  for (const Alias& a : aliases)
    if (cpu.storage().unsafeGetStorageImpl() == a.storage) return on_flagos_storage(cpu, a);
  if (is_flagos_allocation(cpu.storage().data_ptr())) return relabel(cpu, device);
  // The kernel produced ordinary CPU memory (a cached constant, a scalar): copy it.
  const c10::Device where(c10::DeviceType::PrivateUse1, device);
  at::Tensor out = at::empty_strided(cpu.sizes(), cpu.strides(), cpu.options().device(where));
  aten::write_into(out, cpu);
  return out;
}

// After the kernel: an out=/in-place operand whose CPU alias changed shape or
// storage carries the change over to the flagos tensor.
void sync_back(const Alias& a, c10::DeviceIndex device) {
  c10::TensorImpl* flagos = a.flagos.unsafeGetTensorImpl();
  c10::StorageImpl* now = a.cpu.storage().unsafeGetStorageImpl();
  c10::StorageImpl* mine = a.flagos.storage().unsafeGetStorageImpl();
  if (now == a.storage && now->data() != mine->data()) {
    // The kernel grew the storage through flagos_as_cpu_allocator: adopt it.
    c10::DataPtr grown = std::move(now->mutable_data_ptr());
    grown.unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device));
    mine->set_data_ptr_noswap(std::move(grown));
    mine->set_nbytes(now->nbytes());
  } else if (now != a.storage) {
    // The kernel pointed the operand at other memory: copy the values over.
    if (a.flagos.sizes() != a.cpu.sizes()) a.flagos.resize_(a.cpu.sizes());
    aten::write_into(a.flagos, a.cpu.device().is_cpu() ? a.cpu : a.cpu.cpu());
    return;
  }
  if (flagos->sizes() != a.cpu.sizes() || flagos->strides() != a.cpu.strides() ||
      flagos->storage_offset() != a.cpu.storage_offset())
    flagos->set_sizes_and_strides(a.cpu.sizes(), a.cpu.strides(), a.cpu.storage_offset());
}

void wait_for_stream(c10::DeviceIndex device) {
  const auto& plugin = device::active_plugin();
  flagos_stream_t stream = device::current_native(device);
  flagos_status_t status = plugin.api().stream_query(stream);
  if (status == FLAGOS_NOT_READY) status = plugin.api().stream_synchronize(stream);
  plugin.check(status, "stream_synchronize");
}

void wait_for_streams(c10::DeviceIndex device, const c10::SmallVector<Alias, 4>& aliases) {
  wait_for_stream(device);
  for (const Alias& a : aliases)
    if (a.flagos.device().index() != device) wait_for_stream(a.flagos.device().index());
}

}  // namespace

void cpu_boxing(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t num_args = schema.arguments().size();
  c10::IValue* args = &*(stack->end() - num_args);
  const auto found = find_device(args, num_args);
  const c10::DeviceIndex device =
      found ? *found : static_cast<c10::DeviceIndex>(device::current_device());

  c10::SmallVector<c10::IValue, 8> originals(args, args + num_args);
  c10::SmallVector<Alias, 4> aliases;
  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& v = args[i];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!is_flagos(t)) continue;
      at::Tensor alias = cpu_alias(t);
      aliases.push_back({t, alias, alias.storage().unsafeGetStorageImpl()});
      v = std::move(alias);
    } else if (v.isList()) {
      v = map_tensors(v, [&](const at::Tensor& t) {
        if (!is_flagos(t)) return t;
        at::Tensor alias = cpu_alias(t);
        aliases.push_back({t, alias, alias.storage().unsafeGetStorageImpl()});
        return alias;
      });
    } else if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) {
      v = c10::Device(c10::kCPU);
    } else if ((v.isNone() || v.isGenerator()) && is_generator_arg(schema.arguments()[i])) {
      v = device::cpu_generator_for(v.isNone() ? at::Generator() : v.toGenerator(), device);
    }
  }

  // The CPU kernel runs now, on the host: work still queued on the
  // device's current stream (async copies, native kernels) must finish first.
  wait_for_streams(device, aliases);
  {
    HostAllocationScope scope(device);
    op.redispatchBoxed(kCpuKeys, stack);
  }

  for (size_t i = 0; i < num_args; ++i) {
    const c10::AliasInfo* info = schema.arguments()[i].alias_info();
    if (!info || !info->isWrite()) continue;
    for_each_tensor(originals[i], [&](const at::Tensor& t) {
      for (const Alias& a : aliases)
        if (a.flagos.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) sync_back(a, device);
    });
  }

  const size_t num_returns = schema.returns().size();
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& out = (*stack)[stack->size() - num_returns + r];
    const int alias = aliased_argument(schema, r);
    if (alias >= 0 && schema.arguments()[alias].alias_info()->isWrite()) {
      out = originals[alias];
      continue;
    }
    out = map_tensors(out, [&](const at::Tensor& t) { return to_flagos(t, device, aliases); });
  }
}

}  // namespace flagos::routes
