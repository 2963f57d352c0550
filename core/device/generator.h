// The per-device flagos generator. Random kernels run on the interoperable
// device (CPU for host plugins and the fallback, CUDA for CUDA-ABI plugins),
// so each flagos generator wraps one generator of that device (its engine)
// and forwards to it: torch.flagos.manual_seed, get/set_rng_state and
// torch.Generator(device="flagos") act on exactly what kernels draw from.
// On CUDA-ABI plugins the default flagos generator IS torch's default CUDA
// generator of the same GPU (seeding either seeds both).
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace flagos::device {

class FlagosGenerator final : public c10::GeneratorImpl {
 public:
  FlagosGenerator(c10::DeviceIndex device, at::Generator engine);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // The CPU or CUDA generator kernels draw from (same lifetime as this).
  const at::Generator& engine() const { return engine_; }

 private:
  FlagosGenerator* clone_impl() const override;
  at::Generator engine_;
};

// The default generator of `device` (created on first use).
const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

// For kernels running on the interoperable device: the engine to use in
// place of `gen` (a flagos generator, or undefined = the default one of
// `device`). Other generators are returned unchanged.
at::Generator engine_for(const at::Generator& gen, c10::DeviceIndex device);

// Throws while `device`'s current stream captures a graph: the flagos
// generator is not capture-safe (every replay would repeat one draw).
void refuse_random_in_capture(c10::DeviceIndex device);

// Random operators without a Generator argument (native_dropout, ...) draw
// from the CPU default generator when their CPU kernel runs. For the scope
// of such a call, the CPU default generator takes the state of `device`'s
// flagos engine, and the engine takes the advanced state back afterwards,
// so seeding flagos decides them too. No-op when the engine is not a CPU one.
class SeededCpuScope {
 public:
  SeededCpuScope(c10::DeviceIndex device, bool active);
  ~SeededCpuScope();
  SeededCpuScope(const SeededCpuScope&) = delete;
  SeededCpuScope& operator=(const SeededCpuScope&) = delete;

 private:
  at::Generator engine_;
  c10::intrusive_ptr<c10::TensorImpl> saved_;
};

}  // namespace flagos::device
