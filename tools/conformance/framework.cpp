#include "framework.h"

#include <cstring>

#include "helpers.h"

namespace conformance {

const char* result_name(Result r) {
  switch (r) {
    case Result::kPass: return "pass";
    case Result::kFail: return "fail";
    default: return "skip";
  }
}

std::vector<Group> all_groups() {
  return {packaging_group(),   handshake_group(), struct_size_group(), errors_group(),
          device_group(),      memory_group(),    copies_group(),      streams_group(),
          stress_group(),      collectives_group(), graphs_group(),    profiler_group(),
          ipc_group(),         lifecycle_group()};
}

// ---- the table ---------------------------------------------------------------------

namespace {
struct Member {
  const char* name;
  size_t end;     // FLAGOS_STRUCT_SIZE
  size_t offset;  // offsetof
};
#define FLAGOS_MEMBER(m) \
  { #m, FLAGOS_STRUCT_SIZE(flagos_plugin_api_t, m), offsetof(flagos_plugin_api_t, m) }

const Member kRequired[] = {
    FLAGOS_MEMBER(last_error_message), FLAGOS_MEMBER(device_count),
    FLAGOS_MEMBER(get_device_properties), FLAGOS_MEMBER(get_device),
    FLAGOS_MEMBER(set_device), FLAGOS_MEMBER(device_synchronize),
    FLAGOS_MEMBER(mem_alloc), FLAGOS_MEMBER(mem_free),
    FLAGOS_MEMBER(pointer_get_attributes), FLAGOS_MEMBER(memcpy_sync),
    FLAGOS_MEMBER(memcpy_async), FLAGOS_MEMBER(memset_async),
    FLAGOS_MEMBER(get_default_stream), FLAGOS_MEMBER(stream_create),
    FLAGOS_MEMBER(stream_destroy), FLAGOS_MEMBER(stream_query),
    FLAGOS_MEMBER(stream_synchronize), FLAGOS_MEMBER(stream_wait_event),
    FLAGOS_MEMBER(event_create), FLAGOS_MEMBER(event_destroy),
    FLAGOS_MEMBER(event_record), FLAGOS_MEMBER(event_query),
    FLAGOS_MEMBER(event_synchronize),
};
#undef FLAGOS_MEMBER
}  // namespace

std::vector<std::string> missing_required_members(const flagos_plugin_api_t* api) {
  std::vector<std::string> out;
  const char* base = reinterpret_cast<const char*>(api);
  for (const Member& m : kRequired)
    if (api->struct_size < m.end || *reinterpret_cast<void* const*>(base + m.offset) == nullptr)
      out.push_back(m.name);
  return out;
}

size_t required_member_count() { return sizeof kRequired / sizeof kRequired[0]; }

// ---- setup -------------------------------------------------------------------

static std::string check_table(const flagos_plugin_api_t* api) {
  if (!api) return "the entry returned SUCCESS but no table";
  if (api->abi_major != FLAGOS_ABI_MAJOR)
    return strf("plugin ABI major %u, runner speaks %d", api->abi_major, FLAGOS_ABI_MAJOR);
  if (api->struct_size < FLAGOS_PLUGIN_API_MIN_SIZE(api->abi_minor))
    return strf("plugin table struct_size %zu is below the 1.%u size", api->struct_size,
                api->abi_minor);
  return "";
}

std::string Ctx::setup() {
  const flagos_plugin_api_t* table = nullptr;
  flagos_status_t s = plugin.get_api(&table);
  if (s != FLAGOS_SUCCESS) return "the entry returned " + st(s);
  std::string why = check_table(table);
  if (!why.empty()) return why;
  api = table;
  meta["name"] = api->name ? api->name : "(null)";
  meta["version"] = api->version ? api->version : "(null)";
  meta["abi"] = strf("%u.%u", api->abi_major, api->abi_minor);
  meta["table_size"] = strf("%zu", api->struct_size);
  // Checks call required members without FLAGOS_HAS_FN: refuse the group
  // here, as the core would refuse the plugin (handshake names the member).
  std::vector<std::string> missing = missing_required_members(api);
  if (!missing.empty()) return "required member " + missing[0] + " is missing";
  int32_t n = -1;
  s = api->device_count(&n);
  if (s != FLAGOS_SUCCESS || n < 0) return "device_count returned " + st(s);
  device_count = n;
  meta["devices"] = strf("%d", n);
  props.assign(static_cast<size_t>(n), flagos_device_properties_t{});
  for (int32_t d = 0; d < n; ++d) {
    std::memset(&props[d], 0, sizeof props[d]);
    props[d].struct_size = sizeof props[d];
    s = api->get_device_properties(d, &props[d]);
    if (s != FLAGOS_SUCCESS) return strf("get_device_properties(%d) returned ", d) + st(s);
  }
  testing = reinterpret_cast<const flagos_testing_ext_t*>(
      find_extension(api, FLAGOS_EXTENSION_TESTING));
  if (testing && (testing->base.struct_size < FLAGOS_TESTING_EXT_SIZE_1_0 ||
                  !testing->stream_enqueue_delay))
    testing = nullptr;  // too small to use; the handshake group reports it
  return "";
}

// ---- per-check recording -----------------------------------------------------

void Ctx::begin_check() {
  std::lock_guard<std::mutex> lock(mu_);
  note_.clear();
  failures_.clear();
}

CheckResult Ctx::finish_check(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckResult r;
  r.name = name;
  if (failures_.empty()) {
    r.detail = note_;
    return r;
  }
  r.result = Result::kFail;
  for (size_t i = 0; i < failures_.size() && i < 8; ++i)
    r.detail += (i ? "; " : "") + failures_[i];
  if (failures_.size() > 8) r.detail += strf("; ... (%zu failures)", failures_.size());
  return r;
}

void Ctx::note(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  note_ = note_.empty() ? text : note_ + "; " + text;
}

bool Ctx::expect(bool ok, const std::string& what) {
  if (ok) return true;
  std::lock_guard<std::mutex> lock(mu_);
  failures_.push_back(what);
  return false;
}

void Ctx::fail(const std::string& why) { throw CheckFail{why}; }
void Ctx::skip(const std::string& why) { throw CheckSkip{why}; }

std::string Ctx::last_error() const {
  if (!api || !HAS_FN(*this, last_error_message)) return "";
  const char* m = api->last_error_message();
  return m ? m : "(null)";
}

void Ctx::ok(flagos_status_t s, const std::string& call) {
  if (s == FLAGOS_SUCCESS) return;
  fail(call + " returned " + st(s) + " (\"" + last_error() + "\")");
}

bool Ctx::expect_status(flagos_status_t got, flagos_status_t want, const std::string& call) {
  return expect(got == want, call + " returned " + st(got) + ", expected " + st(want));
}

void Ctx::need_devices(int n) {
  if (device_count < n)
    skip(strf("needs %d device%s, the plugin reports %d", n, n == 1 ? "" : "s", device_count));
}

bool Ctx::has_cap(uint64_t bit, int device) const {
  return device < device_count && (props[device].capabilities & bit) != 0;
}

void Ctx::need_cap(uint64_t bit, const char* name, int device) {
  need_devices(device + 1);
  if (!has_cap(bit, device)) skip(strf("device %d does not declare %s", device, name));
}

const flagos_testing_ext_t& Ctx::need_testing() {
  if (!testing) skip("the plugin does not provide the testing extension");
  return *testing;
}

}  // namespace conformance
