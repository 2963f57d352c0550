// The live stream and event handles, in kit::HandleTable so that a handle
// that is NULL, foreign or destroyed is INVALID_HANDLE instead of a crash;
// plus each device's default stream and the streams still running on it.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "event.h"
#include "flagos/abi.h"
#include "stream.h"

namespace flagos_host {

// The mutexes behind the handles, in lock order; held across fork().
std::vector<std::mutex*> handle_mutexes();

inline flagos_stream_t to_handle(Stream* s) { return reinterpret_cast<flagos_stream_t>(s); }

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
