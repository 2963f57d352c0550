#include "aclnn/executor_cache.h"

namespace flagos_cudalike::aclnn {

void release(const Library& lib, Prepared* p, bool repeatable) {
  if (p->executor != nullptr && repeatable) lib.destroy_executor(p->executor);
  for (aclTensor* t : p->inputs) lib.destroy_tensor(t);
  for (aclTensor* t : p->outputs) lib.destroy_tensor(t);
  if (p->scalar != nullptr) lib.destroy_scalar(p->scalar);
  *p = Prepared{};
}

Prepared* ExecutorCache::find(int32_t device, const std::string& key) {
  auto d = entries_.find(device);
  if (d == entries_.end()) return nullptr;
  auto it = d->second.find(key);
  return it == d->second.end() ? nullptr : it->second.get();
}

Prepared* ExecutorCache::insert(const Library& lib, int32_t device, std::string key, Prepared p,
                                const std::function<void()>& drain) {
  auto& device_entries = entries_[device];
  if (device_entries.size() >= kCapacity) {
    drain();
    for (auto& [k, entry] : device_entries) release(lib, entry.get(), true);
    device_entries.clear();
  }
  auto& slot = device_entries[std::move(key)];
  slot = std::make_unique<Prepared>(std::move(p));
  return slot.get();
}

ExecutorCache& executor_cache() {
  static auto* cache = new ExecutorCache;
  return *cache;
}

}  // namespace flagos_cudalike::aclnn
