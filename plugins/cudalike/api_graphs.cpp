// FLAGOS_EXTENSION_GRAPHS over the runtime's stream capture: StreamBeginCapture
// in thread-local mode (calls that would break a capture fail only on the
// thread that captures, so other threads' work is unaffected; the capture is
// ended on the thread that began it), StreamEndCapture, StreamIsCapturing,
// GraphInstantiateWithFlags, GraphLaunch, GraphDestroy, GraphExecDestroy.
// The extension is always chained (the entry must not open the runtime);
// a runtime found without these symbols makes every call UNSUPPORTED.
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "api.h"
#include "device_scope.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "flagos/kit/handle_table.hpp"
#include "handles.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

constexpr int kCaptureModeThreadLocal = 1;  // cudaStreamCaptureModeThreadLocal; HIP, MUSA, MACA alike

// A runtime graph or executable of one device, released with its handle. A
// failed release leaves no per-thread error behind for torch's next check.
struct Graph {
  Graph(int32_t d, void* g) : device(d), graph(g) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (const Runtime* r = loaded_runtime(); r && r->graph_destroy(graph) != 0) r->get_last_error();
  }
  const int32_t device;
  void* const graph;
};
struct Exec {
  Exec(int32_t d, void* x) : device(d), exec(x) {}
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;
  ~Exec() {  // launches in flight complete; the runtime frees it after them
    if (const Runtime* r = loaded_runtime(); r && r->graph_exec_destroy(exec) != 0) r->get_last_error();
  }
  const int32_t device;
  void* const exec;
};

using GraphTable = flagos::kit::HandleTable<flagos_graph_t, Graph>;
using ExecTable = flagos::kit::HandleTable<flagos_graph_exec_t, Exec>;

GraphTable& graphs() {
  static GraphTable* t = new GraphTable("graph");  // leaked: no runtime call at exit
  return *t;
}
ExecTable& execs() {
  static ExecTable* t = new ExecTable("graph executable");
  return *t;
}

// The runtime capture has an id only through GetCaptureInfo, whose signature
// changed between runtime versions; the plugin numbers captures itself.
std::mutex g_ids_mutex;
std::unordered_map<const Stream*, uint64_t> g_capture_ids;
std::atomic<uint64_t> g_next_id{1};

// The runtime, ready, with every capture call: else UNSUPPORTED naming the
// first one missing.
flagos_status_t graphs_ready(const char* fn) {
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  const Runtime& r = rt();
  const char* missing = !r.stream_begin_capture          ? "StreamBeginCapture"
                        : !r.stream_end_capture          ? "StreamEndCapture"
                        : !r.stream_is_capturing         ? "StreamIsCapturing"
                        : !r.graph_instantiate_with_flags ? "GraphInstantiateWithFlags"
                        : !r.graph_launch                ? "GraphLaunch"
                        : !r.graph_destroy               ? "GraphDestroy"
                        : !r.graph_exec_destroy          ? "GraphExecDestroy"
                                                         : nullptr;
  if (missing == nullptr) return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: the %s runtime %s has no %s%s: no graph capture", fn,
              vendor().display, r.path.c_str(), vendor().prefix, missing);
}

// The stream and its runtime stream, inside `scope` on its device, and its
// capture status (cudaStreamCaptureStatus: None 0, Active 1, Invalidated 2,
// as FLAGOS_CAPTURE_*) when `status` is given.
flagos_status_t enter_stream(const char* fn, flagos_stream_t handle, DeviceScope& scope,
                             std::shared_ptr<Stream>* s, rt_stream* native, int* status = nullptr) {
  flagos_status_t st = graphs_ready(fn);
  if (st == FLAGOS_SUCCESS) st = streams().find(fn, handle, s);
  if (st == FLAGOS_SUCCESS) st = (*s)->enter(fn, scope, native);
  if (st != FLAGOS_SUCCESS || status == nullptr) return st;
  int err = rt().stream_is_capturing(*native, status);
  return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "StreamIsCapturing");
}

flagos_status_t api_capture_begin(flagos_stream_t stream) {
  static const char* fn = "capture_begin";
  return guarded(fn, [&] {
    DeviceScope scope;
    std::shared_ptr<Stream> s;
    rt_stream native = nullptr;
    int status = 0;
    flagos_status_t st = enter_stream(fn, stream, scope, &s, &native, &status);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->is_default())
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: stream %p is the default stream of device %d; capture on a created stream",
                  fn, (void*)stream, s->device());
    if (status != FLAGOS_CAPTURE_NONE)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is already capturing", fn,
                  (void*)stream);
    int err = rt().stream_begin_capture(native, kCaptureModeThreadLocal);
    if (err != 0) return rt_fail(fn, err, "StreamBeginCapture(thread-local mode)");
    std::lock_guard<std::mutex> lock(g_ids_mutex);
    g_capture_ids[s.get()] = g_next_id.fetch_add(1);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_capture_end(flagos_stream_t stream, flagos_graph_t* graph) {
  static const char* fn = "capture_end";
  return guarded(fn, [&] {
    DeviceScope scope;
    std::shared_ptr<Stream> s;
    rt_stream native = nullptr;
    int status = 0;
    flagos_status_t st = need(fn, graph, "graph");
    if (st == FLAGOS_SUCCESS) st = enter_stream(fn, stream, scope, &s, &native, &status);
    if (st != FLAGOS_SUCCESS) return st;
    if (status == FLAGOS_CAPTURE_NONE)
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: stream %p is not capturing", fn, (void*)stream);
    {
      std::lock_guard<std::mutex> lock(g_ids_mutex);
      g_capture_ids.erase(s.get());
    }
    void* g = nullptr;
    int err = rt().stream_end_capture(native, &g);
    if (err != 0) {
      if (g != nullptr) rt().graph_destroy(g);
      return rt_fail(fn, err, "StreamEndCapture (the capture was invalidated by an earlier call)");
    }
    *graph = graphs().add(std::make_shared<Graph>(s->device(), g));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_capture_status(flagos_stream_t stream, int32_t* status, uint64_t* id) {
  static const char* fn = "capture_status";
  return guarded(fn, [&] {
    DeviceScope scope;
    std::shared_ptr<Stream> s;
    rt_stream native = nullptr;
    int runtime = 0;
    flagos_status_t st = need(fn, status, "status");
    if (st == FLAGOS_SUCCESS) st = enter_stream(fn, stream, scope, &s, &native, &runtime);
    if (st != FLAGOS_SUCCESS) return st;
    *status = runtime;
    if (id != nullptr) {
      std::lock_guard<std::mutex> lock(g_ids_mutex);
      auto it = g_capture_ids.find(s.get());
      *id = runtime != FLAGOS_CAPTURE_NONE && it != g_capture_ids.end() ? it->second : 0;
    }
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_graph_instantiate(flagos_graph_t graph, flagos_graph_exec_t* exec) {
  static const char* fn = "graph_instantiate";
  return guarded(fn, [&] {
    std::shared_ptr<Graph> g;
    DeviceScope scope;
    flagos_status_t st = graphs_ready(fn);
    if (st == FLAGOS_SUCCESS) st = graphs().find(fn, graph, &g);
    if (st == FLAGOS_SUCCESS) st = need(fn, exec, "exec");
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, g->device);
    if (st != FLAGOS_SUCCESS) return st;
    void* x = nullptr;
    int err = rt().graph_instantiate_with_flags(&x, g->graph, 0);
    if (err != 0) return rt_fail(fn, err, "GraphInstantiateWithFlags on device %d", g->device);
    *exec = execs().add(std::make_shared<Exec>(g->device, x));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_graph_launch(flagos_graph_exec_t exec, flagos_stream_t stream) {
  static const char* fn = "graph_launch";
  return guarded(fn, [&] {
    std::shared_ptr<Exec> x;
    DeviceScope scope;
    std::shared_ptr<Stream> s;
    rt_stream native = nullptr;
    flagos_status_t st = graphs_ready(fn);
    if (st == FLAGOS_SUCCESS) st = execs().find(fn, exec, &x);
    if (st == FLAGOS_SUCCESS) st = enter_stream(fn, stream, scope, &s, &native);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != x->device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: stream %p is on device %d, the graph was captured on device %d", fn,
                  (void*)stream, s->device(), x->device);
    int err = rt().graph_launch(x->exec, native);
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "GraphLaunch on device %d", x->device);
  });
}

flagos_status_t api_graph_destroy(flagos_graph_t graph) {
  return guarded("graph_destroy", [&] {
    std::shared_ptr<Graph> doomed;  // destroyed after the table's lock
    return graph == nullptr ? FLAGOS_SUCCESS : graphs().take("graph_destroy", graph, &doomed);
  });
}

flagos_status_t api_graph_exec_destroy(flagos_graph_exec_t exec) {
  return guarded("graph_exec_destroy", [&] {
    std::shared_ptr<Exec> doomed;
    return exec == nullptr ? FLAGOS_SUCCESS : execs().take("graph_exec_destroy", exec, &doomed);
  });
}

}  // namespace

const flagos_extension_t* graphs_extension() {
  static const flagos_graphs_ext_t ext = {
      {sizeof(flagos_graphs_ext_t), FLAGOS_EXTENSION_GRAPHS, FLAGOS_GRAPHS_EXT_VERSION,
       profiler_extension()},
      1,  // streams join a capture by waiting on its events, as in CUDA
      api_capture_begin,
      api_capture_end,
      api_capture_status,
      api_graph_instantiate,
      api_graph_launch,
      api_graph_destroy,
      api_graph_exec_destroy};
  return &ext.base;
}

std::vector<std::mutex*> graph_mutexes() { return {&graphs().mutex(), &execs().mutex()}; }

}  // namespace flagos_cudalike
