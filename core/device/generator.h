// The per-device flagos generator. Random kernels run on the CPU (through the
// fallback or CPU boxing), so the state is a CPU Philox/MT engine: each
// flagos generator owns one CPU generator and forwards to it. Kernels are
// handed that inner CPU generator (cpu_generator()), so torch.flagos.manual_seed,
// get/set_rng_state and torch.Generator(device="flagos") all act on what the
// kernels actually draw from.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace flagos::device {

class FlagosGenerator final : public c10::GeneratorImpl {
 public:
  explicit FlagosGenerator(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // The CPU generator kernels draw from (same lifetime as this object).
  const at::Generator& cpu_generator() const { return cpu_; }

 private:
  FlagosGenerator* clone_impl() const override;
  at::Generator cpu_;
};

// The default generator of `device` (created and seeded on first use).
const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

// For kernels running on the CPU: the CPU generator to use in place of
// `gen` (a flagos generator, or undefined = the default one of `device`).
at::Generator cpu_generator_for(const at::Generator& gen, c10::DeviceIndex device);

}  // namespace flagos::device
