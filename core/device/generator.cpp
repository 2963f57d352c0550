#include "device/generator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <vector>

#include "device/runtime.h"

namespace flagos::device {

FlagosGenerator::FlagosGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      cpu_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

void FlagosGenerator::set_current_seed(uint64_t seed) { cpu_.set_current_seed(seed); }
void FlagosGenerator::set_offset(uint64_t) {
  TORCH_CHECK(false, "[flagos] the flagos generator has no offset (it is a CPU Mersenne Twister "
                     "state; use get_state/set_state)");
}
uint64_t FlagosGenerator::get_offset() const {
  TORCH_CHECK(false, "[flagos] the flagos generator has no offset (it is a CPU Mersenne Twister "
                     "state; use get_state/set_state)");
}
uint64_t FlagosGenerator::current_seed() const { return cpu_.current_seed(); }
uint64_t FlagosGenerator::seed() { return cpu_.seed(); }
void FlagosGenerator::set_state(const c10::TensorImpl& new_state) {
  cpu_.unsafeGetGeneratorImpl()->set_state(new_state);
}
c10::intrusive_ptr<c10::TensorImpl> FlagosGenerator::get_state() const {
  return cpu_.unsafeGetGeneratorImpl()->get_state();
}
FlagosGenerator* FlagosGenerator::clone_impl() const {
  auto* copy = new FlagosGenerator(device_.index());
  copy->cpu_ = cpu_.clone();
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<at::Generator> generators;
  std::call_once(once, [] {
    for (int32_t d = 0; d < device_count(); ++d) {
      generators.push_back(at::make_generator<FlagosGenerator>(static_cast<c10::DeviceIndex>(d)));
      // Like CUDA: default generators start from the default seed (67280421310721)
      // and torch.manual_seed reseeds them through torch.flagos.manual_seed_all.
    }
  });
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  check_index(device);
  return generators.at(device);
}

at::Generator new_generator(c10::DeviceIndex device) {
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  check_index(device);
  return at::make_generator<FlagosGenerator>(device);
}

at::Generator cpu_generator_for(const at::Generator& gen, c10::DeviceIndex device) {
  if (!gen.defined()) {
    auto& def = default_generator(device);
    return static_cast<FlagosGenerator*>(def.unsafeGetGeneratorImpl())->cpu_generator();
  }
  if (auto* fg = dynamic_cast<FlagosGenerator*>(gen.unsafeGetGeneratorImpl()))
    return fg->cpu_generator();
  return gen;  // a CPU generator passed explicitly: use it as is
}

}  // namespace flagos::device
