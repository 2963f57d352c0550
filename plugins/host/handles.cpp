#include "handles.h"

#include <algorithm>
#include <unordered_map>

#include "devices.h"
#include "errors.h"
#include "options.h"

namespace flagos_host {
namespace {

struct Tables {
  std::unordered_map<flagos_stream_t, std::shared_ptr<Stream>> streams;
  std::unordered_map<flagos_event_t, std::shared_ptr<Event>> events;
  std::shared_ptr<Stream> defaults[kMaxDevices];
  // Weak, so destroyed streams drop out once their worker let go.
  std::vector<std::weak_ptr<Stream>> per_device[kMaxDevices];
};

// Leaked on purpose: no destructor may run at process exit while workers live.
Tables& tables() {
  static Tables* t = new Tables;
  return *t;
}

// With handles_mutex() held.
void track(const std::shared_ptr<Stream>& s) {
  auto& list = tables().per_device[s->device()];
  list.erase(std::remove_if(list.begin(), list.end(), [](auto& w) { return w.expired(); }),
             list.end());
  list.push_back(s);
}

}  // namespace

std::mutex& handles_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

flagos_stream_t add_stream(std::shared_ptr<Stream> s) {
  flagos_stream_t h = to_handle(s.get());
  std::lock_guard<std::mutex> lock(handles_mutex());
  track(s);
  tables().streams[h] = std::move(s);
  return h;
}

std::shared_ptr<Stream> default_stream(int32_t device) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  auto& slot = tables().defaults[device];
  if (!slot) {
    auto s = std::make_shared<Stream>(device, 0, /*is_default=*/true);
    track(s);
    tables().streams[to_handle(s.get())] = s;
    slot = std::move(s);
  }
  return slot;
}

flagos_status_t find_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out) {
  if (h == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: stream is NULL", fn);
  std::lock_guard<std::mutex> lock(handles_mutex());
  auto it = tables().streams.find(h);
  if (it == tables().streams.end())
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: unknown stream %p", fn, (void*)h);
  *out = it->second;
  return FLAGOS_SUCCESS;
}

flagos_status_t remove_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  auto it = tables().streams.find(h);
  if (it == tables().streams.end())
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: unknown stream %p", fn, (void*)h);
  if (it->second->is_default())
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is the default stream of device %d",
                fn, (void*)h, it->second->device());
  *out = std::move(it->second);
  tables().streams.erase(it);
  return FLAGOS_SUCCESS;
}

std::vector<std::shared_ptr<Stream>> device_streams(int32_t device) {
  std::vector<std::shared_ptr<Stream>> out;
  std::lock_guard<std::mutex> lock(handles_mutex());
  for (auto& w : tables().per_device[device])
    if (auto s = w.lock()) out.push_back(std::move(s));
  return out;
}

flagos_event_t add_event(std::shared_ptr<Event> e) {
  flagos_event_t h = to_handle(e.get());
  std::lock_guard<std::mutex> lock(handles_mutex());
  tables().events[h] = std::move(e);
  return h;
}

flagos_status_t find_event(const char* fn, flagos_event_t h, std::shared_ptr<Event>* out) {
  if (h == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: event is NULL", fn);
  std::lock_guard<std::mutex> lock(handles_mutex());
  auto it = tables().events.find(h);
  if (it == tables().events.end())
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: unknown event %p", fn, (void*)h);
  *out = it->second;
  return FLAGOS_SUCCESS;
}

flagos_status_t remove_event(const char* fn, flagos_event_t h) {
  std::shared_ptr<Event> doomed;  // released after the lock
  std::lock_guard<std::mutex> lock(handles_mutex());
  auto it = tables().events.find(h);
  if (it == tables().events.end())
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: unknown event %p", fn, (void*)h);
  doomed = std::move(it->second);
  tables().events.erase(it);
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_host
