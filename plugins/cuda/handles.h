// Live stream and event handles. A handle is the address of its object, and
// every call looks it up first, so a NULL, foreign or destroyed handle is
// INVALID_HANDLE (as long as the address was not reused) instead of a crash.
#pragma once

#include <memory>
#include <mutex>

#include "event.h"
#include "flagos/abi.h"
#include "stream.h"

namespace flagos_cuda {

// Guards both tables; held across fork() (fork_guard.cpp).
std::mutex& handles_mutex();

flagos_stream_t add_stream(std::shared_ptr<Stream> stream);
// The device's default stream, registered at first use (`device` valid).
flagos_stream_t default_stream(int32_t device);
std::shared_ptr<Stream> default_stream_object(int32_t device);
flagos_status_t find_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out);
// Unregisters a created stream; a default stream is refused (INVALID_ARGUMENT).
flagos_status_t take_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out);

flagos_event_t add_event(std::shared_ptr<Event> event);
flagos_status_t find_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out);
flagos_status_t take_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out);

}  // namespace flagos_cuda
