#include "device/graph.h"

#include <atomic>

#include "device/device_allocator.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "error.h"

namespace flagos::device {
namespace {

// Pool ids start far above the ones torch's own CUDA graphs hand out, so
// that on CUDA-ABI plugins a flagos pool never names one of theirs in
// torch's CUDA allocator (graphs.py routes that allocator too).
constexpr uint64_t kFirstId = uint64_t{1} << 48;
std::atomic<uint64_t> g_next_graph{kFirstId};
std::atomic<uint64_t> g_next_handle{kFirstId};
std::atomic<int> g_captures{0};  // captures underway in this process

// Python sees flagos::Error as RuntimeError with exactly this line.
void need(bool ok, const char* what) {
  if (!ok) throw Error(what);
}

memory::CachingAllocator& allocator_of(const c10::Stream& s) {
  return caching_allocator(s.device_index());
}

}  // namespace

const flagos_graphs_ext_t& graphs_extension() {
  const plugin::Plugin& plugin = active_plugin();
  const auto* ext = reinterpret_cast<const flagos_graphs_ext_t*>(
      plugin.find_extension(FLAGOS_EXTENSION_GRAPHS));
  if (!ext || ext->base.struct_size < FLAGOS_GRAPHS_EXT_SIZE_1_3)
    throw Error("plugin '" + plugin.name() +
                "' does not provide graphs (FLAGOS_EXTENSION_GRAPHS): graph capture and "
                "torch.flagos.graph need a plugin that captures streams");
  // A plugin may learn only at first use that its runtime cannot capture.
  static std::atomic<bool> probed{false};
  if (probed.load(std::memory_order_acquire)) return *ext;
  int32_t status = 0;
  flagos_stream_t any = native(default_stream(static_cast<c10::DeviceIndex>(current_device())));
  if (ext->capture_status(any, &status, nullptr) == FLAGOS_ERROR_UNSUPPORTED)
    throw Error("plugin '" + plugin.name() + "' does not provide graphs here: " +
                plugin.api().last_error_message());
  probed.store(true, std::memory_order_release);
  return *ext;
}

PoolId graph_pool_handle() { return {0, g_next_handle.fetch_add(1)}; }

bool is_capturing(const c10::Stream& stream) {
  if (g_captures.load(std::memory_order_relaxed) == 0) return false;
  const plugin::Plugin& plugin = active_plugin();
  const auto* ext = reinterpret_cast<const flagos_graphs_ext_t*>(
      plugin.find_extension(FLAGOS_EXTENSION_GRAPHS));
  if (!ext) return false;
  int32_t status = FLAGOS_CAPTURE_NONE;
  plugin.check(ext->capture_status(native(stream), &status, nullptr), "capture_status");
  return status != FLAGOS_CAPTURE_NONE;
}

void refuse_host_route_in_capture(c10::DeviceIndex device, const std::string& op, const char* route) {
  if (is_capturing(current_stream(device)))
    throw Error(op + " takes the " + route + " route, which runs on the host at once and cannot be "
                "captured in a flagos graph; route it to a kernel that enqueues on the stream "
                "(native, cuda)");
}

Graph::Graph()
    : id_(g_next_graph.fetch_add(1)),
      stream_(c10::Stream::DEFAULT, c10::Device(c10::DeviceType::PrivateUse1, 0)) {}

Graph::~Graph() {
  try {
    reset();
  } catch (...) {  // a destructor cannot report; an explicit reset() would have
  }
}

void Graph::capture_begin(PoolId pool) {
  need(!capturing_, "capture_begin: this graph is already capturing");
  need(exec_ == nullptr, "capture_begin: this graph holds a capture; reset() it first");
  reset();  // a failed capture still held its pool
  const flagos_graphs_ext_t& ext = graphs_extension();
  const auto device = static_cast<c10::DeviceIndex>(current_device());
  const c10::Stream stream = current_stream(device);
  need(stream.id() != default_stream(device).id(),
       "graph capture cannot run on the default stream: capture on a side stream (with "
       "torch.flagos.stream(torch.flagos.Stream()), as torch.flagos.graph does)");
  const PoolId id = pool.first != 0 || pool.second != 0 ? pool : PoolId{id_, 0};
  memory::CachingAllocator& alloc = allocator_of(stream);
  alloc.begin_allocate_to_pool(id, native(stream));
  const flagos_status_t st = ext.capture_begin(native(stream));
  if (st != FLAGOS_SUCCESS) {
    alloc.end_allocate_to_pool(id);
    alloc.release_pool(id);
    active_plugin().check(st, "capture_begin");
  }
  g_captures.fetch_add(1);
  pool_ = id;
  holds_pool_ = true;
  capturing_ = true;
  stream_ = stream;
}

void Graph::capture_end() {
  need(capturing_, "capture_end without capture_begin");
  const flagos_graphs_ext_t& ext = graphs_extension();
  const plugin::Plugin& plugin = active_plugin();
  flagos_graph_t graph = nullptr;
  const flagos_status_t st = ext.capture_end(native(stream_), &graph);
  capturing_ = false;
  g_captures.fetch_sub(1);
  allocator_of(stream_).end_allocate_to_pool(pool_);
  plugin.check(st, "capture_end");
  flagos_graph_exec_t exec = nullptr;
  const flagos_status_t inst = ext.graph_instantiate(graph, &exec);
  ext.graph_destroy(graph);  // the executable keeps what it needs
  plugin.check(inst, "graph_instantiate");
  exec_ = exec;
}

void Graph::replay() {
  need(exec_ != nullptr, "replay() needs a successful capture_end() first");
  const c10::Stream on = current_stream(stream_.device_index());
  active_plugin().check(graphs_extension().graph_launch(exec_, native(on)), "graph_launch");
}

void Graph::reset() {
  need(!capturing_, "reset() while capturing: call capture_end() first");
  if (exec_ != nullptr) {
    flagos_graph_exec_t exec = exec_;
    exec_ = nullptr;
    active_plugin().check(graphs_extension().graph_exec_destroy(exec), "graph_exec_destroy");
  }
  if (holds_pool_) {
    holds_pool_ = false;
    allocator_of(stream_).release_pool(pool_);
  }
}

}  // namespace flagos::device
