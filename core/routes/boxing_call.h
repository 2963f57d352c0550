// One call of a stock device's kernel on flagos memory (routes/boxing.h):
// the operands presented as tensors of the target device type, the kernel
// run where that device expects it, the results made flagos tensors again.
// Both ways of reaching a kernel use it: the boxed route (a Stack, any
// operator) and the typed fast path (typed_boxing.h, the hottest ones).
//
// An alias has a StorageImpl of its own over the operand's bytes: a view the
// kernel takes of it gets its device from the storage, so the storage must
// say the target device. A view it returns is mapped back onto the flagos
// storage; an out= operand it grew adopts the grown block.
//
// Not thread-safe; one per call, on the calling thread's stack.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKey.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

#include <optional>
#include <string>
#include <vector>

#include "routes/device_rule.h"

namespace c10 {
class OperatorHandle;
}

namespace flagos::routes {

enum class BoxingTarget { Cpu, Cuda };

// The dispatch key of the stock kernels a target runs.
constexpr c10::DispatchKey dispatch_key(BoxingTarget target) {
  return target == BoxingTarget::Cpu ? c10::DispatchKey::CPU : c10::DispatchKey::CUDA;
}

// What a call needs to know of its operator, worked out once (at install).
struct OpTraits {
  explicit OpTraits(const c10::OperatorHandle& op);
  // A kernel called from outside the dispatcher (a Python extension's op,
  // torch_fl.compat.apex): named `name`, on one device, returning new tensors.
  explicit OpTraits(std::string name) : name(std::move(name)), returns_new_tensors(true) {}

  std::string name;                      // "aten::add.Tensor", for messages
  bool draws_default_generator = false;  // seeded, without a Generator argument
  int dropout_arg = -1;                   // dropout_argument(): no draw when it is 0
  // Operands may sit on several devices, as on native CUDA: foreach and
  // fused optimizer ops (per-tensor work), copies. Any other op given two
  // flagos devices' tensors is refused, as CUDA's kernels refuse them.
  bool spans_devices = false;
  // A return is not one of the arguments it writes (in-place, out=).
  bool returns_new_tensors = false;
  // Whether non-flagos tensors may sit beside flagos ones (device_rule.h).
  ForeignOperands foreign_operands = ForeignOperands::Refused;
  // Returns that stay on the host (device_rule.h's host_returns).
  uint32_t host_returns = 0;

  // For a call given tensors of flagos devices `first` and `other`: throws
  // flagos::Error, in native CUDA's words (code may match them), unless the
  // op spans devices; and, for a kernel run on the host (`host_kernel`), if
  // it returns new tensors, which nothing would place on their devices.
  void check_devices(c10::DeviceIndex first, c10::DeviceIndex other, bool host_kernel) const;
};

// Blocks until the work queued on `device`'s current stream finished: a host
// kernel reads and writes the memory right away.
void wait_for_stream(c10::DeviceIndex device);

class BoxingCall {
 public:
  // `device`: the flagos device the op runs on (its first flagos operand's).
  // `recycle_aliases`: the kernel is C++ and keeps no alias past the call, so
  // aliases are reused by the thread's next call. Not for kernels that may
  // hand them to Python (the flaggems route), which may tie objects to them.
  BoxingCall(BoxingTarget target, c10::DeviceIndex device, bool recycle_aliases = true);
  ~BoxingCall();
  BoxingCall(const BoxingCall&) = delete;
  BoxingCall& operator=(const BoxingCall&) = delete;

  // `t` as a tensor of the target device type over the same storage; `t`
  // itself when it is not a flagos tensor. A `written` operand (in-place,
  // out=) gets back any size, stride or storage change the kernel makes.
  // Operands over one flagos storage share one alias storage, so that the
  // kernel's overlap checks see them; an element of a tensor list
  // (`in_list`) is not searched for (foreach lists are long, and no kernel
  // checks overlap among list elements), though later operands find it.
  at::Tensor box(const at::Tensor& t, bool written = false, bool in_list = false);
  // Room for `more` operands (a tensor list's) before boxing them.
  void reserve(size_t more) { aliases_.reserve(aliases_.size() + more); }
  // A flagos Device argument as the target device; others unchanged.
  c10::Device box(c10::Device d) const;
  // A Generator argument (none: the default) as the engine the target's
  // kernel draws from for this device (device/generator.h).
  at::Generator box_generator(const std::optional<at::Generator>& gen) const;
  // The call's dropout probability (OpTraits::dropout_arg): at 0 the op
  // draws nothing, so graph capture may take it.
  void note_dropout(double p) { no_draw_ = p == 0.0; }

  // Runs `kernel`: cpu after the device's queued work, under the flagos
  // allocation redirect (and the flagos-seeded CPU generator when the op
  // draws from the default one); cuda on the flagos current stream made
  // torch's current CUDA stream. Then syncs back the written operands.
  // Throws flagos::Error, before running anything, when operands sit on two
  // flagos devices and `op` may not take them (OpTraits::check_devices).
  void run(const OpTraits& op, c10::function_ref<void()> kernel);

  // A result of the kernel as a flagos tensor: re-labelled in place when
  // nothing else holds it, a flagos view when it shares an operand's
  // storage, copied when it is ordinary host memory. Non-target results
  // (already flagos, CUDA kernels' host-side seeds) are returned as they are.
  // On cuda a result goes to the flagos device over its CUDA device.
  at::Tensor unbox(const at::Tensor& result) const;
  // A result that stays on the host (OpTraits::host_returns) in ordinary
  // host memory: the CPU target's kernel made it in flagos memory.
  at::Tensor keep_on_host(const at::Tensor& result) const;

  c10::DeviceIndex device() const { return device_; }
  BoxingTarget target() const { return target_; }

  // Spares kept per thread and target: enough for a foreach op over a large
  // model's parameters (three lists of hundreds), whose aliases would
  // otherwise be allocated and freed on every call — in glibc, enough churn
  // to hand heap memory back to the OS and take it again each time.
  static constexpr size_t kSpareAliases = 2048;
  using SpareAliases = std::vector<at::Tensor>;

 private:
  struct Alias {
    at::Tensor flagos;
    at::Tensor boxed;
    c10::StorageImpl* storage;  // the alias storage as created
    bool written;
  };
  void sync_back(const Alias& a) const;

  BoxingTarget target_;
  c10::DeviceIndex device_;
  c10::Device target_device_;
  c10::DispatchKeySet target_keys_;
  // What a kernel that grows an operand allocates with: the flagos allocator
  // seen as a CPU one, or CUDA's; asked when a new alias storage is made
  // (spares of the target already have it).
  c10::Allocator* grow_ = nullptr;
  c10::SmallVector<Alias, 4> aliases_;
  // Flagos devices of operands other than device_: refused unless the op
  // spans devices; on cpu their queued work is waited for, on cuda their
  // flagos current streams are made CUDA's there too.
  c10::SmallVector<c10::DeviceIndex, 2> other_devices_;
  SpareAliases* spare_;  // this thread's, for the target; null: no recycling
  at::Tensor foreign_;   // a non-flagos operand to judge (note_foreign_operand)
  bool no_draw_ = false;  // note_dropout(0)
};

}  // namespace flagos::routes
