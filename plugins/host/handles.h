// The live stream and event handles. Every call that takes a handle looks it
// up here, so a handle that is NULL, foreign or destroyed is reported as
// INVALID_HANDLE (as far as addresses are not reused) instead of crashing.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "event.h"
#include "flagos/abi.h"
#include "stream.h"

namespace flagos_host {

// Guards the handle tables; held across fork() (see fork_guard).
std::mutex& handles_mutex();

inline flagos_stream_t to_handle(Stream* s) { return reinterpret_cast<flagos_stream_t>(s); }
inline flagos_event_t to_handle(Event* e) { return reinterpret_cast<flagos_event_t>(e); }

// Registers a new stream and returns its handle.
flagos_stream_t add_stream(std::shared_ptr<Stream> s);
// The device's default stream, created (without a worker) at first use.
std::shared_ptr<Stream> default_stream(int32_t device);
// SUCCESS with *out set, or INVALID_HANDLE naming `fn`.
flagos_status_t find_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out);
// Unregisters a created stream. Default streams are refused (INVALID_ARGUMENT).
flagos_status_t remove_stream(const char* fn, flagos_stream_t h, std::shared_ptr<Stream>* out);
// Every stream of `device` still alive, including destroyed ones still draining.
std::vector<std::shared_ptr<Stream>> device_streams(int32_t device);

flagos_event_t add_event(std::shared_ptr<Event> e);
flagos_status_t find_event(const char* fn, flagos_event_t h, std::shared_ptr<Event>* out);
flagos_status_t remove_event(const char* fn, flagos_event_t h);

}  // namespace flagos_host
