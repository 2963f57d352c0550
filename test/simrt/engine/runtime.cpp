#include "runtime.h"

#include <pthread.h>

#include <map>

#include "config.h"

namespace simrt {
namespace {

constexpr uintptr_t kStreamBase = 0x5100000000000;  // disjoint token ranges
constexpr uintptr_t kEventBase = 0x5e00000000000;

struct Registry {
  std::mutex mu;
  std::map<std::string, Runtime*> by_key;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // leaked: see runtime_for
    // A child forked after the parent used a runtime gets InitializationError
    // from it, as CUDA's does: its worker threads did not survive the fork.
    pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                   [] {
                     Registry& g = registry();
                     for (auto& kv : g.by_key) kv.second->poisoned = kv.second->initialised.load();
                     g.mu.unlock();
                   });
    return reg;
  }();
  return *r;
}

template <class T>
std::shared_ptr<T> lookup(std::unordered_map<uintptr_t, std::shared_ptr<T>>& m, void* h, bool take) {
  auto it = m.find(reinterpret_cast<uintptr_t>(h));
  if (it == m.end()) return nullptr;
  std::shared_ptr<T> v = it->second;
  if (take) m.erase(it);
  return v;
}

}  // namespace

Runtime::Runtime(std::string key, int id)
    : key_(std::move(key)),
      id_(id),
      memory_(config().devices, config().memory_bytes, config().guard) {
  for (int d = 0; d < config().devices; ++d) devices_.push_back(std::make_unique<Device>());
}

std::shared_ptr<Stream> Runtime::legacy_stream(int d) {
  Device& dev = device(d);
  std::lock_guard<std::mutex> lock(dev.mu);
  if (!dev.legacy) {
    dev.legacy = Stream::create(d, 0, 0, /*legacy=*/true, /*non_blocking=*/false);
    dev.streams.push_back(dev.legacy);
  }
  return dev.legacy;
}

std::shared_ptr<Stream> Runtime::new_stream(int d, int priority, unsigned flags, bool non_blocking) {
  auto s = Stream::create(d, priority, flags, false, non_blocking);
  Device& dev = device(d);
  std::lock_guard<std::mutex> lock(dev.mu);
  // Drop entries of streams that are gone, so the list tracks live streams.
  std::vector<std::weak_ptr<Stream>> keep;
  for (auto& w : dev.streams)
    if (!w.expired()) keep.push_back(w);
  keep.push_back(s);
  dev.streams.swap(keep);
  return s;
}

void Runtime::sync_device(int d) {
  std::vector<std::shared_ptr<Stream>> all;
  {
    Device& dev = device(d);
    std::lock_guard<std::mutex> lock(dev.mu);
    for (auto& w : dev.streams)
      if (auto s = w.lock()) all.push_back(s);
  }
  for (auto& s : all) s->wait_all();
}

void Runtime::sync_all() {
  for (int d = 0; d < device_count(); ++d) sync_device(d);
}

void* Runtime::add_stream(std::shared_ptr<Stream> s) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  uintptr_t h = kStreamBase + 16 * next_handle_++;
  streams_[h] = std::move(s);
  return reinterpret_cast<void*>(h);
}

std::shared_ptr<Stream> Runtime::find_stream(void* h) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  return lookup(streams_, h, false);
}

std::shared_ptr<Stream> Runtime::take_stream(void* h) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  return lookup(streams_, h, true);
}

void* Runtime::add_event(std::shared_ptr<Event> e) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  uintptr_t h = kEventBase + 16 * next_handle_++;
  events_[h] = std::move(e);
  return reinterpret_cast<void*>(h);
}

std::shared_ptr<Event> Runtime::find_event(void* h) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  return lookup(events_, h, false);
}

std::shared_ptr<Event> Runtime::take_event(void* h) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  return lookup(events_, h, true);
}

Runtime& runtime_for(const Vendor& v) {
  // Per-thread cache of the last lookup: most calls skip the registry lock.
  thread_local const Vendor* last_v = nullptr;
  thread_local Runtime* last_rt = nullptr;
  if (last_v == &v) return *last_rt;
  last_rt = &runtime_for_key(v.key);
  last_v = &v;
  return *last_rt;
}

Runtime& runtime_for_key(const char* key) {
  Registry& g = registry();
  std::lock_guard<std::mutex> lock(g.mu);
  Runtime*& rt = g.by_key[key];
  if (rt == nullptr) rt = new Runtime(key, static_cast<int>(g.by_key.size()) - 1);
  return *rt;
}

ThreadState& thread_state(const Runtime& rt) {
  thread_local ThreadState states[kMaxRuntimes];
  return states[rt.id() % kMaxRuntimes];
}

}  // namespace simrt
