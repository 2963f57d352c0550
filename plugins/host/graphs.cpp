#include "graphs.h"

#include <memory>

#include "capture.h"
#include "collectives.h"
#include "flagos/kit/handle_table.hpp"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

// Distinct types, so a graph handle is never taken for an executable.
struct Graph {
  std::shared_ptr<const Recording> recording;
};
struct Exec {
  std::shared_ptr<const Recording> recording;
};

using GraphTable = kit::HandleTable<flagos_graph_t, Graph>;
using ExecTable = kit::HandleTable<flagos_graph_exec_t, Exec>;

// Leaked on purpose, like the stream table: no destructor runs at exit.
GraphTable& graphs() {
  static GraphTable* t = new GraphTable("graph");
  return *t;
}
ExecTable& execs() {
  static ExecTable* t = new ExecTable("graph executable");
  return *t;
}

flagos_status_t api_capture_begin(flagos_stream_t stream) {
  static const char* fn = "capture_begin";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->is_default())
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: stream %p is the default stream of device %d; capture on a created stream",
                  fn, (void*)stream, s->device());
    return s->begin_capture(fn, std::make_shared<Capture>(s->device()));
  });
}

flagos_status_t api_capture_end(flagos_stream_t stream, flagos_graph_t* graph) {
  static const char* fn = "capture_end";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, graph, "graph");
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Capture> c = s->end_capture();
    if (!c)
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: stream %p is not capturing", fn, (void*)stream);
    auto rec = std::make_shared<Recording>();
    rec->device = c->device();
    st = c->finish(fn, &rec->nodes);
    if (st != FLAGOS_SUCCESS) return st;
    *graph = graphs().add(std::make_shared<Graph>(Graph{std::move(rec)}));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_capture_status(flagos_stream_t stream, int32_t* status, uint64_t* id) {
  static const char* fn = "capture_status";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, status, "status");
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Capture> c = s->capture();
    *status = !c ? FLAGOS_CAPTURE_NONE
                 : c->invalidated() ? FLAGOS_CAPTURE_INVALIDATED : FLAGOS_CAPTURE_ACTIVE;
    if (id != nullptr) *id = c ? c->id() : 0;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_graph_instantiate(flagos_graph_t graph, flagos_graph_exec_t* exec) {
  static const char* fn = "graph_instantiate";
  return guarded(fn, [&] {
    std::shared_ptr<Graph> g;
    flagos_status_t st = graphs().find(fn, graph, &g);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, exec, "exec");
    if (st != FLAGOS_SUCCESS) return st;
    *exec = execs().add(std::make_shared<Exec>(Exec{g->recording}));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_graph_launch(flagos_graph_exec_t exec, flagos_stream_t stream) {
  static const char* fn = "graph_launch";
  return guarded(fn, [&] {
    std::shared_ptr<Exec> x;
    std::shared_ptr<Stream> s;
    flagos_status_t st = execs().find(fn, exec, &x);
    if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != x->recording->device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: stream %p is on device %d, the graph was captured on device %d", fn,
                  (void*)stream, s->device(), x->recording->device);
    return launch(fn, *x->recording, *s);
  });
}

flagos_status_t api_graph_destroy(flagos_graph_t graph) {
  return guarded("graph_destroy", [&] {
    std::shared_ptr<Graph> doomed;  // released after the table's lock
    return graph == nullptr ? FLAGOS_SUCCESS : graphs().take("graph_destroy", graph, &doomed);
  });
}

// Launched tasks are copies in their stream's queue: they keep their blocks.
flagos_status_t api_graph_exec_destroy(flagos_graph_exec_t exec) {
  return guarded("graph_exec_destroy", [&] {
    std::shared_ptr<Exec> doomed;
    return exec == nullptr ? FLAGOS_SUCCESS : execs().take("graph_exec_destroy", exec, &doomed);
  });
}

flagos_graphs_ext_t& graphs_ext() {
  static flagos_graphs_ext_t ext = [] {
    flagos_graphs_ext_t e{};
    e.base.struct_size = sizeof(flagos_graphs_ext_t);
    e.base.type = FLAGOS_EXTENSION_GRAPHS;
    e.base.version = FLAGOS_GRAPHS_EXT_VERSION;
    e.base.next = collectives_extension();
    e.multi_stream = 0;
    e.capture_begin = api_capture_begin;
    e.capture_end = api_capture_end;
    e.capture_status = api_capture_status;
    e.graph_instantiate = api_graph_instantiate;
    e.graph_launch = api_graph_launch;
    e.graph_destroy = api_graph_destroy;
    e.graph_exec_destroy = api_graph_exec_destroy;
    return e;
  }();
  return ext;
}

}  // namespace

const flagos_extension_t* graphs_extension() { return &graphs_ext().base; }

void set_graphs_next(const flagos_extension_t* next) { graphs_ext().base.next = next; }

std::vector<std::mutex*> graph_mutexes() { return {&graphs().mutex(), &execs().mutex()}; }

}  // namespace flagos_host
