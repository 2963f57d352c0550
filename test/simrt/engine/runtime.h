// One simulated runtime instance: its devices, memory, and live handles. The
// runtime and driver libraries of one SDK share an instance by key, through
// this engine library, as libcudart and libcuda share the driver's state.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory.h"
#include "stream.h"
#include "vendor.h"

namespace simrt {

struct Event {
  unsigned flags = 0;
  int device = 0;
  std::mutex mu;
  std::shared_ptr<Point> recorded;  // the latest record; null: never recorded
};

struct Device {
  std::atomic<bool> ctx_active{false};
  std::atomic<uint64_t> peers{0};  // bit p: peer access to device p enabled
  std::mutex mu;
  std::shared_ptr<Stream> legacy;              // the NULL stream, created on first use
  std::vector<std::weak_ptr<Stream>> streams;  // every stream, for device-wide syncs
};

class OpObserver;

class Runtime {
 public:
  Runtime(std::string key, int id);

  int device_count() const { return static_cast<int>(devices_.size()); }
  Device& device(int d) { return *devices_[d]; }
  Memory& memory() { return memory_; }
  const std::string& key() const { return key_; }
  int id() const { return id_; }

  std::shared_ptr<Stream> legacy_stream(int d);
  std::shared_ptr<Stream> new_stream(int d, int priority, unsigned flags, bool non_blocking);
  void sync_device(int d);  // waits for every stream of d, destroyed ones included
  void sync_all();

  // Handles are never-reused tokens in disjoint ranges, so a destroyed,
  // foreign or wrong-kind handle is always InvalidResourceHandle.
  void* add_stream(std::shared_ptr<Stream> s);
  std::shared_ptr<Stream> find_stream(void* h);
  std::shared_ptr<Stream> take_stream(void* h);
  void* add_event(std::shared_ptr<Event> e);
  std::shared_ptr<Event> find_event(void* h);
  std::shared_ptr<Event> take_event(void* h);

  std::atomic<bool> initialised{false};  // driver initialised (cuInit or any runtime call)
  std::atomic<bool> poisoned{false};     // forked child of a process that used it
  std::atomic<OpObserver*> observer{nullptr};  // a tracer library's hook (observer.h)
  std::atomic<bool> native_initialised{false};  // a native vendor's own init call (aclInit) ran

 private:
  std::string key_;
  int id_;
  std::vector<std::unique_ptr<Device>> devices_;
  Memory memory_;
  std::mutex handles_mu_;
  uint64_t next_handle_ = 1;
  std::unordered_map<uintptr_t, std::shared_ptr<Stream>> streams_;
  std::unordered_map<uintptr_t, std::shared_ptr<Event>> events_;
};

constexpr int kMaxRuntimes = 16;

// The instance for a vendor key, created on first use and never destroyed
// (worker threads may outlive static destructors at exit).
Runtime& runtime_for(const Vendor& v);
// The same by key, for a library with no vendor table (the tracer, observer.h).
Runtime& runtime_for_key(const char* key);

// Per-thread, per-instance state.
struct ThreadState {
  int device = 0;
  int last_error = 0;
  int rule_code = -1;     // GetErrorString(rule_code) returns rule_text
  std::string rule_text;
  std::string recent;     // a native vendor's latest failure text (aclGetRecentErrMsg)
};
ThreadState& thread_state(const Runtime& rt);

}  // namespace simrt
