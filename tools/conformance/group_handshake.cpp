// handshake: the entry symbol and the table it returns (abi.h, plugin_api.h).
#include <dirent.h>

#include <cstring>
#include <string>
#include <thread>
#include <unordered_set>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

const flagos_plugin_api_t* get_table(Ctx& c) {
  const flagos_plugin_api_t* api = nullptr;
  HostInfo info(c.plugin.options());
  flagos_status_t s = c.plugin.entry()(info.get(), &api);
  info.scribble();
  c.ok(s, "flagos_plugin_get_api");
  c.require(api != nullptr, "the entry returned SUCCESS but *api is NULL");
  c.api = api;
  return api;
}

// Runs first in a fresh process, so the refusal is tested before any
// successful handshake could have cached state.
void refuses_next_major(Ctx& c) {
  HostInfo bad(c.plugin.options(), FLAGOS_ABI_MAJOR + 1);
  const flagos_plugin_api_t* api = nullptr;
  flagos_status_t s = c.plugin.entry()(bad.get(), &api);
  c.expect_status(s, FLAGOS_ERROR_INCOMPATIBLE_ABI,
                  strf("flagos_plugin_get_api(abi_major=%d)", FLAGOS_ABI_MAJOR + 1));
  c.note("checked before any successful entry call in this process");
}

// Threads of this process, from /proc/self/task; -1 when unavailable.
int count_threads() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// "It must not initialise the driver, spawn threads or touch devices": the
// first successful call in this process must leave the thread count alone.
void entry_starts_no_threads(Ctx& c) {
  int before = count_threads();
  if (before < 0) c.skip("/proc/self/task is not readable");
  get_table(c);
  int after = count_threads();
  c.require(after == before, strf("threads %d -> %d across the first successful entry call", before, after));
  c.note(strf("%d thread(s) before and after", before));
}

void entry_succeeds(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  c.note(strf("table of %zu bytes, ABI %u.%u", api->struct_size, api->abi_major, api->abi_minor));
}

// The plugin copies what it keeps from host_info (get_table scribbles over
// it after each call): later calls must not see the junk.
void host_info_not_retained(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  c.require(api->name && api->last_error_message && api->device_count, "table incomplete");
  int32_t n1 = -1, n2 = -1;
  c.ok(api->device_count(&n1), "device_count");
  get_table(c);
  c.ok(api->device_count(&n2), "device_count after another entry call");
  c.expect(n1 == n2, strf("device_count changed from %d to %d", n1, n2));
  c.expect(api->last_error_message() != nullptr, "last_error_message returned NULL");
  c.note(strf("device_count %d with host_info overwritten after each entry call", n1));
}

// "It may be called again ... and must return the same table", on any thread.
void same_table(Ctx& c) {
  const flagos_plugin_api_t* first = get_table(c);
  const flagos_plugin_api_t* second = get_table(c);
  c.expect(first == second, "a second call returned a different table");
  const flagos_plugin_api_t* other = nullptr;
  flagos_status_t s = FLAGOS_ERROR_UNKNOWN;
  std::thread t([&] { s = c.plugin.get_api(&other); });
  t.join();
  c.expect_status(s, FLAGOS_SUCCESS, "flagos_plugin_get_api on another thread");
  c.expect(other == first, "a call from another thread returned a different table");
}

// "Unknown keys must be ignored (and may be reported through
// last_error_message by no call)": the call is made on a fresh thread whose
// message must stay "".
void ignores_unknown_options(Ctx& c) {
  const flagos_plugin_api_t* first = get_table(c);
  Options opts = c.plugin.options();
  opts.emplace_back("flagos_conformance_unknown_key", "1");
  HostInfo info(opts);
  const flagos_plugin_api_t* api = nullptr;
  flagos_status_t s = FLAGOS_ERROR_UNKNOWN;
  std::string msg = "(not read)";
  std::thread t([&] {
    s = c.plugin.entry()(info.get(), &api);
    const char* m = first->last_error_message();
    msg = m ? m : "(null)";
  });
  t.join();
  c.ok(s, "flagos_plugin_get_api with an unknown option key");
  c.expect(api == first, "an unknown option changed the returned table");
  c.expect(msg.empty(), "the unknown option was reported through last_error_message: \"" + msg + "\"");
}

// Same major, other minor: a newer core must still be served (the plugin
// never calls host services newer than host->abi_minor), and so must the
// oldest supported one.
void accepts_other_host_minors(Ctx& c) {
  const flagos_plugin_api_t* first = get_table(c);
  std::string seen;
  for (uint32_t minor : {uint32_t{FLAGOS_ABI_MIN_SUPPORTED_MINOR}, uint32_t{FLAGOS_ABI_MINOR + 1},
                         uint32_t{FLAGOS_ABI_MINOR + 7}}) {
    HostInfo info(c.plugin.options());
    info.mutable_info()->abi_minor = minor;
    const flagos_plugin_api_t* api = nullptr;
    flagos_status_t s = c.plugin.entry()(info.get(), &api);
    c.expect_status(s, FLAGOS_SUCCESS, strf("flagos_plugin_get_api(host 1.%u)", minor));
    c.expect(s != FLAGOS_SUCCESS || api == first, strf("host 1.%u got a different table", minor));
    seen += strf("%s1.%u", seen.empty() ? "" : ", ", minor);
  }
  c.note("hosts " + seen + " accepted");
}

void abi_version(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  c.require(api->abi_major == FLAGOS_ABI_MAJOR,
            strf("abi_major %u, expected %d", api->abi_major, FLAGOS_ABI_MAJOR));
#if FLAGOS_ABI_MIN_SUPPORTED_MINOR > 0  // (a comparison with 0 would always hold)
  c.require(api->abi_minor >= FLAGOS_ABI_MIN_SUPPORTED_MINOR,
            strf("abi_minor %u is older than the oldest supported minor %d", api->abi_minor,
                 FLAGOS_ABI_MIN_SUPPORTED_MINOR));
#endif
  c.note(strf("plugin %u.%u, runner %d.%d", api->abi_major, api->abi_minor, FLAGOS_ABI_MAJOR,
              FLAGOS_ABI_MINOR));
  if (api->abi_minor > FLAGOS_ABI_MINOR)
    c.note("the plugin is newer than this runner: members after 1.0 are not tested");
}

// abi_sizes.h: a plugin claiming minor M presents at least M's frozen size; a
// minor newer than the runner must cover everything the runner knows.
void table_size(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  size_t need = api->abi_minor > FLAGOS_ABI_MINOR ? sizeof(flagos_plugin_api_t)
                                                  : FLAGOS_PLUGIN_API_MIN_SIZE(api->abi_minor);
  c.require(api->struct_size >= need, strf("struct_size %zu < %zu required for minor %u",
                                           api->struct_size, need, api->abi_minor));
  c.note(strf("struct_size %zu (frozen 1.0 size %zu)", api->struct_size,
              static_cast<size_t>(FLAGOS_PLUGIN_API_SIZE_1_0)));
}

void required_members(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  for (const std::string& m : missing_required_members(api))
    c.expect(false, m + " is NULL or outside struct_size");
  c.note(strf("%zu required members", required_member_count()));
}

void name_version(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  c.require(api->name != nullptr, "name is NULL");
  c.expect(api->version != nullptr, "version is NULL");
  std::string name = api->name;
  bool valid = !name.empty();
  for (char ch : name) valid = valid && ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_');
  c.expect(valid, "name '" + name + "' does not match [a-z0-9_]+");
  c.note("name '" + name + "', version '" + (api->version ? api->version : "(null)") + "'");
}

// Structural checks of a known extension beyond its base.
void check_known_extension(Ctx& c, const flagos_plugin_api_t* api, const flagos_extension_t* e) {
  if (e->type == FLAGOS_EXTENSION_TESTING) {
    c.require(e->struct_size >= FLAGOS_TESTING_EXT_SIZE_1_0, "testing extension too small");
    auto* t = reinterpret_cast<const flagos_testing_ext_t*>(e);
    c.expect(t->stream_enqueue_delay != nullptr, "testing: stream_enqueue_delay is NULL");
  } else if (e->type == FLAGOS_EXTENSION_DIAGNOSTICS) {
    c.require(e->struct_size >= FLAGOS_DIAGNOSTICS_EXT_SIZE_1_1, "diagnostics extension too small");
    auto* d = reinterpret_cast<const flagos_diagnostics_ext_t*>(e);
    c.require(d->device_note != nullptr, "diagnostics: device_note is NULL");
    int32_t count = -1;
    c.ok(api->device_count(&count), "device_count");
    const char* note = d->device_note();
    c.expect(note != nullptr && std::strchr(note, '\n') == nullptr, "diagnostics: device_note is NULL or not one line");
  } else if (e->type == FLAGOS_EXTENSION_COLLECTIVES) {
    c.require(e->struct_size >= FLAGOS_COLLECTIVES_EXT_SIZE_1_2, "collectives extension too small");
    auto* x = reinterpret_cast<const flagos_collectives_ext_t*>(e);
    c.expect(x->supports_dtype && x->comm_id_create && x->comm_create && x->comm_destroy &&
                 x->comm_abort && x->comm_status && x->all_reduce && x->broadcast && x->reduce &&
                 x->all_gather && x->reduce_scatter && x->send && x->recv && x->group_start &&
                 x->group_end,
             "collectives: a function is NULL");
  } else if (e->type == FLAGOS_EXTENSION_GRAPHS) {
    c.require(e->struct_size >= FLAGOS_GRAPHS_EXT_SIZE_1_3, "graphs extension too small");
    auto* x = reinterpret_cast<const flagos_graphs_ext_t*>(e);
    c.expect(x->capture_begin && x->capture_end && x->capture_status && x->graph_instantiate &&
                 x->graph_launch && x->graph_destroy && x->graph_exec_destroy,
             "graphs: a function is NULL");
  } else if (e->type == FLAGOS_EXTENSION_PROFILER) {
    c.require(e->struct_size >= FLAGOS_PROFILER_EXT_SIZE_1_4, "profiler extension too small");
    auto* x = reinterpret_cast<const flagos_profiler_ext_t*>(e);
    c.expect(x->clock_now && x->profiler_create && x->profiler_start && x->profiler_stop &&
                 x->profiler_collect && x->profiler_destroy && x->push_correlation &&
                 x->pop_correlation,
             "profiler: a function is NULL");
  } else if (e->type == FLAGOS_EXTENSION_IPC) {
    c.require(e->struct_size >= FLAGOS_IPC_EXT_SIZE_1_5, "ipc extension too small");
    auto* x = reinterpret_cast<const flagos_ipc_ext_t*>(e);
    c.expect(x->export_memory && x->open_memory && x->close_memory, "ipc: a function is NULL");
    const bool all = (x->flags & FLAGOS_IPC_ALL_ALLOCATIONS) != 0;
    c.expect(all == (x->mem_alloc_shareable == nullptr),
             "ipc: mem_alloc_shareable must be NULL exactly when FLAGOS_IPC_ALL_ALLOCATIONS is set");
  } else if (e->type == FLAGOS_EXTENSION_KERNELS) {
    c.require(e->struct_size >= FLAGOS_KERNELS_EXT_SIZE_1_0, "kernels extension too small");
    auto* k = reinterpret_cast<const flagos_kernels_ext_t*>(e);
    c.require(k->num_kernels == 0 || k->kernels != nullptr, "kernels: kernels is NULL");
    for (size_t i = 0; i < k->num_kernels; ++i) {
      const flagos_kernel_t* kn = k->kernels[i];
      c.expect(kn && kn->struct_size >= FLAGOS_KERNEL_SIZE_1_0 && kn->schema && kn->run,
               strf("kernels[%zu] is NULL, too small, or lacks schema/run", i));
      // The core matches str(schema) of an out= overload: "aten::name.overload(...".
      std::string schema = kn && kn->schema ? kn->schema : "";
      size_t paren = schema.find('(');
      c.expect(schema.rfind("aten::", 0) == 0 && paren != std::string::npos &&
                   schema.find('.') < paren,
               strf("kernels[%zu]: '%s' is not an 'aten::name.overload(...)' schema", i,
                    schema.c_str()));
    }
  }
}

void extensions_chain(Ctx& c) {
  const flagos_plugin_api_t* api = get_table(c);
  std::unordered_set<const void*> seen;
  std::string types;
  for (const flagos_extension_t* e = api->extensions; e; e = e->next) {
    c.require(seen.insert(e).second, "the extension chain has a cycle");
    c.require(seen.size() <= 256, "the extension chain is longer than 256");
    c.require(e->struct_size >= FLAGOS_EXTENSION_SIZE_1_0,
              strf("extension type %d: struct_size %zu < %zu", e->type, e->struct_size,
                   static_cast<size_t>(FLAGOS_EXTENSION_SIZE_1_0)));
    // Types below 0x10000 belong to the ABI: a plugin uses those of its minor
    // (DIAGNOSTICS came with 1.1, COLLECTIVES with 1.2, GRAPHS with 1.3,
    // PROFILER with 1.4, IPC with 1.5), or vendor-private ones.
    const bool known = e->type == FLAGOS_EXTENSION_KERNELS || e->type == FLAGOS_EXTENSION_TESTING ||
                       (e->type == FLAGOS_EXTENSION_DIAGNOSTICS && api->abi_minor >= 1) ||
                       (e->type == FLAGOS_EXTENSION_COLLECTIVES && api->abi_minor >= 2) ||
                       (e->type == FLAGOS_EXTENSION_GRAPHS && api->abi_minor >= 3) ||
                       (e->type == FLAGOS_EXTENSION_PROFILER && api->abi_minor >= 4) ||
                       (e->type == FLAGOS_EXTENSION_IPC && api->abi_minor >= 5);
    c.expect(known || e->type >= 0x10000 || api->abi_minor > FLAGOS_ABI_MINOR,
             strf("extension type %d is not a type of ABI 1.%u, nor vendor-private", e->type, api->abi_minor));
    check_known_extension(c, api, e);
    types += strf("%s%d(v%u)", types.empty() ? "" : ",", e->type, e->version);
  }
  c.note(types.empty() ? "no extensions" : "types " + types);
}

}  // namespace

Group handshake_group() {
  Group g("handshake", "entry symbol, table version and size, required members, extensions");
  g.needs_api = false;  // these checks call the entry themselves, in a set order
  g.uses_device = false;
  g.add("refuses-next-major", refuses_next_major)
      .add("entry-starts-no-threads", entry_starts_no_threads)
      .add("entry-succeeds", entry_succeeds)
      .add("host-info-not-retained", host_info_not_retained)
      .add("same-table-every-call", same_table)
      .add("ignores-unknown-options", ignores_unknown_options)
      .add("accepts-other-host-minors", accepts_other_host_minors)
      .add("abi-version", abi_version)
      .add("table-size", table_size)
      .add("required-members", required_members)
      .add("name-and-version", name_version)
      .add("extensions-chain", extensions_chain);
  return g;
}

}  // namespace conformance
