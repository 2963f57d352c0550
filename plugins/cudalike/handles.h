// Live stream and event handles (kit::HandleTable), and each device's
// default stream, registered at first use.
#pragma once

#include <memory>
#include <mutex>

#include "flagos/abi.h"
#include "flagos/kit/handle_table.hpp"
#include "stream.h"

namespace flagos_cudalike {

using StreamTable = flagos::kit::HandleTable<flagos_stream_t, Stream>;
using EventTable = flagos::kit::HandleTable<flagos_event_t, Event>;

StreamTable& streams();
EventTable& events();
// Guards the default-stream slots; held across fork() with the tables'.
std::mutex& defaults_mutex();

// The device's default stream, registered at first use (`device` valid).
std::shared_ptr<Stream> default_stream_object(int32_t device);
flagos_stream_t default_stream(int32_t device);

// Unregisters a created stream; a default stream is refused (INVALID_ARGUMENT).
flagos_status_t take_stream(const char* fn, flagos_stream_t handle, std::shared_ptr<Stream>* out);

}  // namespace flagos_cudalike
