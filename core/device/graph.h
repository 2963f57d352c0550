// Graph capture for torch.flagos.FlagosGraph (docs/graphs.md), over the
// plugin's FLAGOS_EXTENSION_GRAPHS (flagos/ext/graphs.h). A Graph captures
// the work enqueued on the current stream between capture_begin and
// capture_end, while the device's caching allocator serves that stream from
// the graph's private pool; replay launches the captured work on the
// current stream. Not thread-safe: one Graph is driven by one thread.
#pragma once

#include <c10/core/Stream.h>

#include <cstdint>
#include <string>
#include <utility>

#include "flagos/flagos.h"
#include "memory/caching_allocator.h"

namespace flagos::device {

using PoolId = memory::PoolId;

// The active plugin's graphs extension. Throws flagos::Error naming the
// plugin when it has none, or when its runtime cannot capture.
const flagos_graphs_ext_t& graphs_extension();

// A fresh pool id no graph owns yet, for sharing one pool between graphs.
PoolId graph_pool_handle();

// Whether `stream` is capturing (false without the extension). Cheap when
// no capture is underway in the process.
bool is_capturing(const c10::Stream& stream);

// Throws while `device`'s current stream captures: operator `op` takes a
// route (`route`: "cpu", "cpu_fallback") that runs on the host at once.
void refuse_host_route_in_capture(c10::DeviceIndex device, const std::string& op, const char* route);

class Graph {
 public:
  Graph();
  ~Graph();  // reset(), errors swallowed
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Starts capturing the current stream of the current device, which must
  // not be its default stream. `pool` {0, 0}: a private pool of its own.
  void capture_begin(PoolId pool = {0, 0});
  // Ends the capture and instantiates it. Throws the plugin's reason when
  // the capture was invalidated (the stream is out of capture mode then).
  void capture_end();
  // Launches the captured work on the current stream of the capture device.
  void replay();
  // Drops the executable and this graph's use of its pool.
  void reset();

  PoolId pool() const { return pool_; }
  bool capturing() const { return capturing_; }
  // The capture stream (valid once capture_begin succeeded).
  c10::Stream stream() const { return stream_; }

 private:
  const uint64_t id_;
  PoolId pool_{0, 0};
  bool capturing_ = false;
  bool holds_pool_ = false;  // this graph counts as a user of pool_
  c10::Stream stream_;
  flagos_graph_exec_t exec_ = nullptr;
};

}  // namespace flagos::device
