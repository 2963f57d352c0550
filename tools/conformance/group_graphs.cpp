// graphs: FLAGOS_EXTENSION_GRAPHS (flagos/ext/graphs.h), run only when the
// plugin chains it. Graphs are captured from copies and memsets on one
// created stream; every replay is checked byte for byte against the result
// computed here, after new input data was uploaded between replays (so a
// graph that copied data at capture instead of pointers fails).
#include <cstring>
#include <memory>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

using Graphs = flagos_graphs_ext_t;

const Graphs& need_graphs(Ctx& c) {
  const Graphs* e = &need_extension<Graphs>(c, FLAGOS_EXTENSION_GRAPHS, "graphs", FLAGOS_GRAPHS_EXT_SIZE_1_3);
  c.need_devices(1);
  // A plugin that learns at first use that its runtime cannot capture says
  // so from every call; capture_status is the harmless one to ask.
  int32_t status = -1;
  flagos_status_t probe = e->capture_status(default_stream(c, 0), &status, nullptr);
  if (probe == FLAGOS_ERROR_UNSUPPORTED) c.skip("graphs unsupported here: " + c.last_error());
  c.ok(probe, "capture_status(default stream)");
  return *e;
}

int32_t capture_status(Ctx& c, const Graphs& g, flagos_stream_t s) {
  int32_t status = -1;
  c.ok(g.capture_status(s, &status, nullptr), "capture_status");
  return status;
}

// Owns a graph and an executable; destroyed on scope exit.
struct Captured {
  Ctx& c;
  const Graphs& g;
  flagos_graph_t graph = nullptr;
  flagos_graph_exec_t exec = nullptr;
  ~Captured() {
    if (exec) g.graph_exec_destroy(exec);
    if (graph) g.graph_destroy(graph);
  }
  void end(flagos_stream_t s) {
    c.ok(g.capture_end(s, &graph), "capture_end");
    c.require(graph != nullptr, "capture_end succeeded without a graph");
    c.ok(g.graph_instantiate(graph, &exec), "graph_instantiate");
    c.require(exec != nullptr, "graph_instantiate succeeded without an executable");
  }
};

// The recorded work: out = [in[0, n/2) | byte 0x5a ...] then in[0, n/2) again
// at the end, through a scratch buffer: D2D copies and memsets in order.
void record_copies(Ctx& c, flagos_stream_t s, void* in, void* scratch, void* out, uint64_t n) {
  const flagos_plugin_api_t* a = c.api;
  c.ok(a->memset_async(scratch, 0x11, n, s), "memset_async (capturing)");
  c.ok(a->memcpy_async(scratch, in, n / 2, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s),
       "memcpy_async D2D (capturing)");
  c.ok(a->memset_async(static_cast<char*>(scratch) + n / 2, 0x5a, n / 4, s),
       "memset_async (capturing)");
  c.ok(a->memcpy_async(out, scratch, n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s),
       "memcpy_async D2D (capturing)");
}

std::vector<unsigned char> expected_copies(const std::vector<unsigned char>& in) {
  const size_t n = in.size();
  std::vector<unsigned char> want(n, 0x11);
  std::memcpy(want.data(), in.data(), n / 2);
  std::memset(want.data() + n / 2, 0x5a, n / 4);
  return want;
}

void extension_table(Ctx& c) {
  const Graphs& g = need_graphs(c);
  c.expect(g.capture_begin && g.capture_end && g.capture_status && g.graph_instantiate &&
               g.graph_launch && g.graph_destroy && g.graph_exec_destroy,
           "graphs: a function is NULL");
  c.expect(g.multi_stream == 0 || g.multi_stream == 1, "graphs: multi_stream is not 0 or 1");
  c.note(strf("multi_stream %d", g.multi_stream));
}

// Capture runs nothing; each replay reads the input as it is at launch.
void capture_and_replay(Ctx& c) {
  const Graphs& g = need_graphs(c);
  const uint64_t n = 1 << 16;
  DevBuf in(c, 0, n), scratch(c, 0, n), out(c, 0, n);
  Stream s(c, 0);
  std::vector<unsigned char> host(n), marker(n), got(n);
  fill_pattern(marker.data(), n, 99);
  upload(c, out.get(), marker.data(), n);
  Captured cap{c, g};
  c.ok(g.capture_begin(s.get()), "capture_begin");
  uint64_t id = 0;
  int32_t status = -1;
  c.ok(g.capture_status(s.get(), &status, &id), "capture_status");
  c.expect(status == FLAGOS_CAPTURE_ACTIVE && id != 0,
           strf("capture_status while capturing: status %d id %llu", status, (unsigned long long)id));
  record_copies(c, s.get(), in.get(), scratch.get(), out.get(), n);
  cap.end(s.get());
  c.expect(capture_status(c, g, s.get()) == FLAGOS_CAPTURE_NONE, "capture_status after capture_end");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize after capture");
  download(c, got.data(), out.get(), n);
  c.expect(compare_bytes(got.data(), marker.data(), n).empty(), "the capture ran work: out changed");
  const int kReplays = 5;
  for (int r = 0; r < kReplays; ++r) {
    fill_pattern(host.data(), n, 1000 + r);
    upload(c, in.get(), host.data(), n);
    c.ok(g.graph_launch(cap.exec, s.get()), "graph_launch");
    c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize after graph_launch");
    download(c, got.data(), out.get(), n);
    std::string diff = compare_bytes(got.data(), expected_copies(host).data(), n);
    c.require(diff.empty(), strf("replay %d: ", r) + diff);
  }
  c.note(strf("%d replays of 4 recorded copies/memsets", kReplays));
}

// A launch runs after the work before it on the launch stream (another
// stream than the capture's) and before the work after it.
void replay_order(Ctx& c) {
  const Graphs& g = need_graphs(c);
  const uint64_t n = 1 << 20;
  DevBuf in(c, 0, n), scratch(c, 0, n), out(c, 0, n), after(c, 0, n);
  Stream cs(c, 0), ls(c, 0);
  Captured cap{c, g};
  c.ok(g.capture_begin(cs.get()), "capture_begin");
  record_copies(c, cs.get(), in.get(), scratch.get(), out.get(), n);
  cap.end(cs.get());
  std::vector<unsigned char> host(n), got(n);
  fill_pattern(host.data(), n, 7);
  upload(c, in.get(), host.data(), n);
  if (c.testing) delay(c, ls.get(), 50);
  c.ok(c.api->memset_async(in.get(), 0x77, n / 8, ls.get()), "memset_async before the launch");
  c.ok(g.graph_launch(cap.exec, ls.get()), "graph_launch");
  c.ok(c.api->memcpy_async(after.get(), out.get(), n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, ls.get()),
       "memcpy_async after the launch");
  c.ok(c.api->stream_synchronize(ls.get()), "stream_synchronize");
  std::memset(host.data(), 0x77, n / 8);
  download(c, got.data(), after.get(), n);
  std::string diff = compare_bytes(got.data(), expected_copies(host).data(), n);
  c.expect(diff.empty(), "launch not ordered with its stream: " + diff);
}

// event_record and a wait on it inside one capture; the event works as
// usual once recorded again after the capture.
void events_in_capture(Ctx& c) {
  const Graphs& g = need_graphs(c);
  const uint64_t n = 4096;
  DevBuf a(c, 0, n), b(c, 0, n);
  Stream s(c, 0);
  Event e(c, 0);
  Captured cap{c, g};
  c.ok(g.capture_begin(s.get()), "capture_begin");
  c.ok(c.api->memset_async(a.get(), 0x21, n, s.get()), "memset_async (capturing)");
  c.ok(c.api->event_record(e.get(), s.get()), "event_record (capturing)");
  c.ok(c.api->stream_wait_event(s.get(), e.get()), "stream_wait_event on the capture's own event");
  c.ok(c.api->memcpy_async(b.get(), a.get(), n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s.get()),
       "memcpy_async D2D (capturing)");
  cap.end(s.get());
  c.ok(g.graph_launch(cap.exec, s.get()), "graph_launch");
  c.ok(c.api->event_record(e.get(), s.get()), "event_record after the launch");
  c.ok(c.api->event_synchronize(e.get()), "event_synchronize after the launch");
  c.expect_status(c.api->event_query(e.get()), FLAGOS_SUCCESS, "event_query after the launch");
  std::vector<unsigned char> got(n), want(n, 0x21);
  download(c, got.data(), b.get(), n);
  c.expect(compare_bytes(got.data(), want.data(), n).empty(), "events in capture: wrong result");
}

// A forbidden call: FLAGOS_ERROR_STREAM_CAPTURE, the capture invalidated,
// capture_end reports it and ends it, the stream works again afterwards.
void forbidden(Ctx& c, const char* what,
               const std::function<flagos_status_t(flagos_stream_t, void*, flagos_event_t)>& call) {
  const Graphs& g = need_graphs(c);
  const uint64_t n = 4096;
  DevBuf a(c, 0, n);
  Stream s(c, 0);
  Event e(c, 0);
  c.ok(g.capture_begin(s.get()), "capture_begin");
  c.ok(c.api->memset_async(a.get(), 0x31, n, s.get()), "memset_async (capturing)");
  c.ok(c.api->event_record(e.get(), s.get()), "event_record (capturing)");
  c.expect_status(call(s.get(), a.get(), e.get()), FLAGOS_ERROR_STREAM_CAPTURE, what);
  const std::string message = c.last_error();
  c.expect(capture_status(c, g, s.get()) == FLAGOS_CAPTURE_INVALIDATED,
           strf("capture_status after %s is not INVALIDATED", what));
  flagos_graph_t graph = nullptr;
  c.expect_status(g.capture_end(s.get(), &graph), FLAGOS_ERROR_STREAM_CAPTURE,
                  "capture_end of an invalidated capture");
  c.expect(graph == nullptr, "capture_end of an invalidated capture wrote a graph");
  if (graph) g.graph_destroy(graph);
  c.expect(capture_status(c, g, s.get()) == FLAGOS_CAPTURE_NONE,
           "the stream still captures after capture_end");
  c.ok(c.api->memset_async(a.get(), 0x32, n, s.get()), "memset_async after the failed capture");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize after the failed capture");
  std::vector<unsigned char> got(n), want(n, 0x32);
  download(c, got.data(), a.get(), n);
  c.expect(compare_bytes(got.data(), want.data(), n).empty(),
           "the stream does not work after the failed capture");
  c.note(message);
}

void sync_in_capture(Ctx& c) {
  forbidden(c, "stream_synchronize of the capturing stream",
            [&](flagos_stream_t s, void*, flagos_event_t) { return c.api->stream_synchronize(s); });
}

void query_in_capture(Ctx& c) {
  forbidden(c, "stream_query of the capturing stream",
            [&](flagos_stream_t s, void*, flagos_event_t) { return c.api->stream_query(s); });
}

void event_sync_in_capture(Ctx& c) {
  forbidden(c, "event_synchronize of an event recorded in the capture",
            [&](flagos_stream_t, void*, flagos_event_t e) { return c.api->event_synchronize(e); });
}

void pageable_copy_in_capture(Ctx& c) {
  std::vector<unsigned char> host(4096);
  forbidden(c, "memcpy_async D2H to pageable memory", [&](flagos_stream_t s, void* a, flagos_event_t) {
    return c.api->memcpy_async(host.data(), a, host.size(), FLAGOS_MEMCPY_DEVICE_TO_HOST, s);
  });
}

void begin_end_errors(Ctx& c) {
  const Graphs& g = need_graphs(c);
  Stream s(c, 0);
  c.expect_status(g.capture_begin(default_stream(c, 0)), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "capture_begin on the default stream");
  flagos_graph_t graph = nullptr;
  c.expect_status(g.capture_end(s.get(), &graph), FLAGOS_ERROR_INVALID_STATE,
                  "capture_end without capture_begin");
  c.ok(g.capture_begin(s.get()), "capture_begin");
  c.expect_status(g.capture_begin(s.get()), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "capture_begin on a capturing stream");
  c.expect_status(g.capture_end(s.get(), nullptr), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "capture_end(NULL graph)");
  c.ok(g.capture_end(s.get(), &graph), "capture_end of an empty capture");
  flagos_graph_exec_t exec = nullptr;
  c.ok(g.graph_instantiate(graph, &exec), "graph_instantiate of an empty graph");
  c.ok(g.graph_launch(exec, s.get()), "graph_launch of an empty graph");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  c.expect_status(g.graph_destroy(nullptr), FLAGOS_SUCCESS, "graph_destroy(NULL)");
  c.expect_status(g.graph_exec_destroy(nullptr), FLAGOS_SUCCESS, "graph_exec_destroy(NULL)");
  c.ok(g.graph_exec_destroy(exec), "graph_exec_destroy");
  c.ok(g.graph_destroy(graph), "graph_destroy");
}

// The executable and graph go while launches are still pending (a delay
// ahead of them when the testing extension allows): the launches complete.
void destroy_while_pending(Ctx& c) {
  const Graphs& g = need_graphs(c);
  const uint64_t n = 1 << 20;
  DevBuf in(c, 0, n), scratch(c, 0, n), out(c, 0, n);
  Stream s(c, 0);
  std::vector<unsigned char> host(n), got(n);
  fill_pattern(host.data(), n, 3);
  upload(c, in.get(), host.data(), n);
  auto cap = std::make_unique<Captured>(Captured{c, g});
  c.ok(g.capture_begin(s.get()), "capture_begin");
  record_copies(c, s.get(), in.get(), scratch.get(), out.get(), n);
  cap->end(s.get());
  c.ok(g.graph_destroy(cap->graph), "graph_destroy before any launch");
  cap->graph = nullptr;
  if (c.testing) delay(c, s.get(), 100);
  for (int i = 0; i < 3; ++i) c.ok(g.graph_launch(cap->exec, s.get()), "graph_launch");
  cap.reset();  // graph_exec_destroy with three launches pending
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize after graph_exec_destroy");
  download(c, got.data(), out.get(), n);
  c.expect(compare_bytes(got.data(), expected_copies(host).data(), n).empty(),
           "launches pending at graph_exec_destroy gave a wrong result");
}

}  // namespace

Group graphs_group() {
  Group g("graphs", "FLAGOS_EXTENSION_GRAPHS: capture, replay, ordering, forbidden calls");
  g.add("extension-table", extension_table)
      .add("capture-and-replay", capture_and_replay)
      .add("replay-order", replay_order)
      .add("events-in-capture", events_in_capture)
      .add("sync-in-capture", sync_in_capture)
      .add("query-in-capture", query_in_capture)
      .add("event-sync-in-capture", event_sync_in_capture)
      .add("pageable-copy-in-capture", pageable_copy_in_capture)
      .add("begin-end-errors", begin_end_errors)
      .add("destroy-while-pending", destroy_while_pending);
  return g;
}

}  // namespace conformance
