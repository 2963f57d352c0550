#include "handles.h"

#include <algorithm>

#include "flagos/kit/handle_table.hpp"
#include "kit.h"
#include "options.h"

namespace flagos_host {
namespace {

using StreamTable = kit::HandleTable<flagos_stream_t, Stream>;
using EventTable = kit::HandleTable<flagos_event_t, Event>;

// What the stream table cannot tell: a device's default stream, and its
// destroyed streams that still drain (device_synchronize waits for them).
struct Devices {
  std::mutex mutex;  // taken before the stream table's, never inside it
  std::shared_ptr<Stream> defaults[kMaxDevices];
  // Weak, so destroyed streams drop out once their worker let go.
  std::vector<std::weak_ptr<Stream>> streams[kMaxDevices];
};

// Leaked on purpose: no destructor may run at process exit while workers live.
StreamTable& streams() {
  static StreamTable* t = new StreamTable("stream");
  return *t;
}
EventTable& events() {
  static EventTable* t = new EventTable("event");
  return *t;
}
Devices& devices() {
  static Devices* d = new Devices;
  return *d;
}

// With devices().mutex held.
void track(const std::shared_ptr<Stream>& s) {
  auto& list = devices().streams[s->device()];
  list.erase(std::remove_if(list.begin(), list.end(), [](auto& w) { return w.expired(); }),
             list.end());
  list.push_back(s);
}

}  // namespace

std::vector<std::mutex*> handle_mutexes() {
  return {&devices().mutex, &streams().mutex(), &events().mutex()};
}

flagos_stream_t add_stream(std::shared_ptr<Stream> s) {
  std::lock_guard<std::mutex> lock(devices().mutex);
  track(s);
  return streams().add(std::move(s));
}

std::shared_ptr<Stream> default_stream(int32_t device) {
  std::lock_guard<std::mutex> lock(devices().mutex);
  auto& slot = devices().defaults[device];
  if (!slot) {
    slot = std::make_shared<Stream>(device, 0, /*is_default=*/true);
    track(slot);
    streams().add(slot);
  }
  return slot;
}

flagos_status_t find_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out) {
  return streams().find(fn, h, out);
}

flagos_status_t remove_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out) {
  return streams().take(fn, h, out, [&](const Stream& s) -> flagos_status_t {
    if (!s.is_default()) return FLAGOS_SUCCESS;
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is the default stream of device %d",
                fn, (void*)h, s.device());
  });
}

std::vector<std::shared_ptr<Stream>> device_streams(int32_t device) {
  std::vector<std::shared_ptr<Stream>> out;
  std::lock_guard<std::mutex> lock(devices().mutex);
  for (auto& w : devices().streams[device])
    if (auto s = w.lock()) out.push_back(std::move(s));
  return out;
}

flagos_event_t add_event(std::shared_ptr<Event> e) { return events().add(std::move(e)); }

flagos_status_t find_event(const char* fn, flagos_event_t h, std::shared_ptr<Event>* out) {
  return events().find(fn, h, out);
}

flagos_status_t remove_event(const char* fn, flagos_event_t h) {
  std::shared_ptr<Event> doomed;  // released after the table's lock
  return events().take(fn, h, &doomed);
}

}  // namespace flagos_host
