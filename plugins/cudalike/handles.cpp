#include "handles.h"

#include <vector>

#include "devices.h"
#include "errors.h"

namespace flagos_cudalike {

// Leaked on purpose: streams must outlive static destructors at exit.
StreamTable& streams() {
  static StreamTable* t = new StreamTable("stream");
  return *t;
}

EventTable& events() {
  static EventTable* t = new EventTable("event");
  return *t;
}

std::mutex& defaults_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

std::shared_ptr<Stream> default_stream_object(int32_t device) {
  static auto* defaults = new std::vector<std::shared_ptr<Stream>>;
  std::lock_guard<std::mutex> lock(defaults_mutex());
  if (defaults->empty()) defaults->resize(static_cast<size_t>(device_count()));
  std::shared_ptr<Stream>& slot = (*defaults)[device];
  if (!slot) {
    slot = std::make_shared<Stream>(device);
    streams().add(slot);
  }
  return slot;
}

flagos_stream_t default_stream(int32_t device) {
  return reinterpret_cast<flagos_stream_t>(default_stream_object(device).get());
}

flagos_status_t take_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out) {
  return streams().take(fn, handle, out, [&](const Stream& s) {
    if (!s.is_default()) return FLAGOS_SUCCESS;
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is the default stream of device %d", fn,
                static_cast<void*>(handle), s.device());
  });
}

}  // namespace flagos_cudalike
