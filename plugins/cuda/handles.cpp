#include "handles.h"

#include <unordered_map>
#include <vector>

#include "devices.h"
#include "errors.h"

namespace flagos_cuda {
namespace {

// One table per handle type. Every member is called with handles_mutex() held.
template <class Handle, class Object>
class Table {
 public:
  explicit Table(const char* what) : what_(what) {}

  Handle add(std::shared_ptr<Object> obj) {
    Handle h = reinterpret_cast<Handle>(obj.get());
    live_[h] = std::move(obj);
    return h;
  }

  flagos_status_t find(const char* fn, Handle h, std::shared_ptr<Object>* out) {
    if (h == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %s is NULL", fn, what_);
    auto it = live_.find(h);
    if (it == live_.end()) return unknown(fn, h);
    *out = it->second;
    return FLAGOS_SUCCESS;
  }

  // `keep(obj)` may refuse the removal with a status of its own.
  template <class Keep>
  flagos_status_t take(const char* fn, Handle h, std::shared_ptr<Object>* out, Keep&& keep) {
    auto it = live_.find(h);
    if (it == live_.end()) return unknown(fn, h);
    flagos_status_t st = keep(*it->second);
    if (st != FLAGOS_SUCCESS) return st;
    *out = std::move(it->second);
    live_.erase(it);
    return FLAGOS_SUCCESS;
  }

 private:
  flagos_status_t unknown(const char* fn, Handle h) {
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p is not a live %s of this plugin", fn,
                static_cast<void*>(h), what_);
  }

  const char* what_;
  std::unordered_map<Handle, std::shared_ptr<Object>> live_;
};

struct Registry {
  Table<flagos_stream_t, Stream> streams{"stream"};
  Table<flagos_event_t, Event> events{"event"};
  std::vector<std::shared_ptr<Stream>> defaults;  // by device, filled at first use
};

// Leaked on purpose: streams must outlive static destructors at exit.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

std::mutex& handles_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

flagos_stream_t add_stream(std::shared_ptr<Stream> stream) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().streams.add(std::move(stream));
}

std::shared_ptr<Stream> default_stream_object(int32_t device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(handles_mutex());
  if (r.defaults.empty()) r.defaults.resize(static_cast<size_t>(device_count()));
  std::shared_ptr<Stream>& slot = r.defaults[device];
  if (!slot) {
    slot = std::make_shared<Stream>(device);
    r.streams.add(slot);
  }
  return slot;
}

flagos_stream_t default_stream(int32_t device) {
  return reinterpret_cast<flagos_stream_t>(default_stream_object(device).get());
}

flagos_status_t find_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().streams.find(fn, handle, out);
}

flagos_status_t take_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().streams.take(fn, handle, out, [&](const Stream& s) {
    if (!s.is_default()) return FLAGOS_SUCCESS;
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is the default stream of device %d",
                fn, static_cast<void*>(handle), s.device());
  });
}

flagos_event_t add_event(std::shared_ptr<Event> event) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().events.add(std::move(event));
}

flagos_status_t find_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().events.find(fn, handle, out);
}

flagos_status_t take_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  return registry().events.take(fn, handle, out, [](const Event&) { return FLAGOS_SUCCESS; });
}

}  // namespace flagos_cuda
