// Stream resolution and CUDA's legacy-stream ordering, shared by every call
// that enqueues work.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "call.h"
#include "stream.h"

namespace simrt {

// NULL (and CUDA's cudaStreamLegacy, 0x1) is the current device's legacy
// stream. Null result: *err holds the code to return.
std::shared_ptr<Stream> resolve_stream(Call& c, void* handle, int* err);

// Enqueues with the legacy default stream's implicit synchronisation: work on
// the legacy stream waits for every blocking stream of its device, and work on
// a blocking stream waits for the legacy stream. Non-blocking streams opt out.
uint64_t enqueue_ordered(Runtime& rt, const std::shared_ptr<Stream>& s, std::function<void()> fn,
                         std::vector<Dep> deps = {}, std::shared_ptr<Point> mark = nullptr);

// "Simulated <Vendor> Device", or SIMRT_NAME.
std::string device_name(const Vendor& v);

}  // namespace simrt
