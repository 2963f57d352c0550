#include "device/generator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <mutex>
#include <vector>

#include "device/graph.h"
#include "device/runtime.h"
#include "device/streams.h"

namespace flagos::device {
namespace {

// CUDA-ABI plugin on a CUDA torch: kernels run on the GPU the device is.
int cuda_ordinal(c10::DeviceIndex device) {
  if (!has_capability(device, FLAGOS_CAP_CUDA_ABI) || !c10::impl::hasDeviceGuardImpl(c10::kCUDA)) return -1;
  return properties(device).interop_device_index;
}

at::Generator default_engine(c10::DeviceIndex device) {
  const int cuda = cuda_ordinal(device);
  if (cuda >= 0)
    return at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(cuda)));
  return at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val);
}

at::Generator new_engine(c10::DeviceIndex device) {
  const int cuda = cuda_ordinal(device);
  if (cuda >= 0) return at::detail::getCUDAHooks().getNewGenerator(static_cast<c10::DeviceIndex>(cuda));
  return at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val);
}

c10::DeviceIndex resolve(c10::DeviceIndex device) {
  if (device < 0) device = static_cast<c10::DeviceIndex>(current_device());
  check_index(device);
  return device;
}

}  // namespace

FlagosGenerator::FlagosGenerator(c10::DeviceIndex device, at::Generator engine)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      engine_(std::move(engine)) {}

void FlagosGenerator::set_current_seed(uint64_t seed) { engine_.set_current_seed(seed); }
// Philox engines (CUDA) have an offset; the CPU Mersenne Twister has none.
void FlagosGenerator::set_offset(uint64_t offset) {
  TORCH_CHECK(!engine_.device().is_cpu(), "[flagos] the flagos generator of ", device_,
              " has no offset: it draws from a CPU Mersenne Twister (use get_state/set_state)");
  engine_.set_offset(offset);
}
uint64_t FlagosGenerator::get_offset() const {
  TORCH_CHECK(!engine_.device().is_cpu(), "[flagos] the flagos generator of ", device_,
              " has no offset: it draws from a CPU Mersenne Twister (use get_state/set_state)");
  return engine_.get_offset();
}
uint64_t FlagosGenerator::current_seed() const { return engine_.current_seed(); }
uint64_t FlagosGenerator::seed() { return engine_.seed(); }
void FlagosGenerator::set_state(const c10::TensorImpl& new_state) {
  engine_.unsafeGetGeneratorImpl()->set_state(new_state);
}
c10::intrusive_ptr<c10::TensorImpl> FlagosGenerator::get_state() const {
  return engine_.unsafeGetGeneratorImpl()->get_state();
}
FlagosGenerator* FlagosGenerator::clone_impl() const {
  return new FlagosGenerator(device_.index(), engine_.clone());
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<at::Generator> generators;
  std::call_once(once, [] {
    // Like CUDA's, default generators start from the default seed;
    // torch.manual_seed reseeds them through torch.flagos.manual_seed_all.
    for (int32_t d = 0; d < device_count(); ++d) {
      auto index = static_cast<c10::DeviceIndex>(d);
      generators.push_back(at::make_generator<FlagosGenerator>(index, default_engine(index)));
    }
  });
  return generators.at(resolve(device));
}

at::Generator new_generator(c10::DeviceIndex device) {
  device = resolve(device);
  return at::make_generator<FlagosGenerator>(device, new_engine(device));
}

void refuse_random_in_capture(c10::DeviceIndex device) {
  TORCH_CHECK(!is_capturing(current_stream(device)),
              "[flagos] random operators cannot be captured in a flagos graph (the flagos "
              "generator is not capture-safe: every replay would repeat one draw); draw outside "
              "the graph and copy the numbers into a static input");
}

at::Generator engine_for(const at::Generator& gen, c10::DeviceIndex device) {
  refuse_random_in_capture(device);
  if (!gen.defined()) {
    auto& def = default_generator(device);
    return static_cast<FlagosGenerator*>(def.unsafeGetGeneratorImpl())->engine();
  }
  if (auto* fg = dynamic_cast<FlagosGenerator*>(gen.unsafeGetGeneratorImpl())) return fg->engine();
  return gen;
}

SeededCpuScope::SeededCpuScope(c10::DeviceIndex device, bool active) {
  if (!active) return;
  at::Generator engine = engine_for(at::Generator(), device);
  if (engine.device().type() != c10::kCPU) return;
  auto& cpu = const_cast<at::Generator&>(at::detail::getDefaultCPUGenerator());
  std::scoped_lock lock(cpu.mutex(), engine.mutex());
  saved_ = cpu.unsafeGetGeneratorImpl()->get_state();
  cpu.unsafeGetGeneratorImpl()->set_state(*engine.unsafeGetGeneratorImpl()->get_state());
  engine_ = std::move(engine);
}

SeededCpuScope::~SeededCpuScope() {
  if (!engine_.defined()) return;
  auto& cpu = const_cast<at::Generator&>(at::detail::getDefaultCPUGenerator());
  std::scoped_lock lock(cpu.mutex(), engine_.mutex());
  engine_.unsafeGetGeneratorImpl()->set_state(*cpu.unsafeGetGeneratorImpl()->get_state());
  cpu.unsafeGetGeneratorImpl()->set_state(*saved_);
}

}  // namespace flagos::device
