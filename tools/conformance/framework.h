// framework.h — checks, groups, the per-check context and result recording.
//
// A check is a function of a Ctx. It passes by returning, fails through
// Ctx::fail (stop now) or Ctx::expect (record and continue), and skips through
// Ctx::skip with a reason. The runner (runner.cpp) guards each check so that
// one failure, exception or crash never stops the suite.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "flagos/flagos.h"
#include "plugin_handle.h"

namespace conformance {

enum class Result { kPass, kFail, kSkip };
const char* result_name(Result r);

// Thrown by Ctx::fail / Ctx::skip and caught by the runner.
struct CheckFail {
  std::string reason;
};
struct CheckSkip {
  std::string reason;
};

struct CheckResult {
  std::string name;
  Result result = Result::kPass;
  std::string detail;
};

class Ctx {
 public:
  explicit Ctx(PluginHandle& plugin) : plugin(plugin) {}

  PluginHandle& plugin;
  const flagos_plugin_api_t* api = nullptr;  // set by setup()
  int32_t device_count = 0;
  std::vector<flagos_device_properties_t> props;  // one per device
  const flagos_testing_ext_t* testing = nullptr;  // FLAGOS_EXTENSION_TESTING or null
  // No device has been used in this process yet (a fork test needs that).
  bool pristine = true;
  // Facts for the report header (plugin name, version...), filled by setup().
  std::map<std::string, std::string> meta;

  // Calls the entry, reads device count and properties, finds the testing
  // extension. Returns "" or why the group cannot run.
  std::string setup();

  // ---- used by checks ----------------------------------------------------
  void note(const std::string& text);                   // detail of a pass
  bool expect(bool ok, const std::string& what);        // record, continue
  [[noreturn]] void fail(const std::string& why);
  [[noreturn]] void skip(const std::string& why);
  void require(bool ok, const std::string& what) {
    if (!ok) fail(what);
  }
  // Requires FLAGOS_SUCCESS; the failure names the call and the plugin's message.
  void ok(flagos_status_t s, const std::string& call);
  // Soft check of an exact status code.
  bool expect_status(flagos_status_t got, flagos_status_t want, const std::string& call);

  void need_devices(int n);  // skip unless at least n devices
  bool has_cap(uint64_t bit, int device = 0) const;
  void need_cap(uint64_t bit, const char* name, int device = 0);
  const flagos_testing_ext_t& need_testing();
  std::string last_error() const;  // copy of api->last_error_message()

  // ---- used by the runner ------------------------------------------------
  void begin_check();
  CheckResult finish_check(const std::string& name);

 private:
  std::mutex mu_;  // expect() may be called from worker threads
  std::string note_;
  std::vector<std::string> failures_;
};

// Skips the check unless the plugin table holds `fn` (FLAGOS_HAS_FN).
#define NEED_FN(c, fn)                                                        \
  do {                                                                        \
    if (!FLAGOS_HAS_FN(flagos_plugin_api_t, (c).api, fn))                     \
      (c).skip("the plugin does not provide " #fn);                           \
  } while (0)
#define HAS_FN(c, fn) FLAGOS_HAS_FN(flagos_plugin_api_t, (c).api, fn)

// Members the header marks [required] that the table lacks (NULL or outside
// struct_size), by name.
std::vector<std::string> missing_required_members(const flagos_plugin_api_t* api);
size_t required_member_count();

using CheckFn = std::function<void(Ctx&)>;

struct Check {
  std::string name;
  CheckFn fn;
};

struct Group {
  std::string name;
  std::string summary;
  bool needs_api = true;    // the runner calls Ctx::setup before the checks
  bool uses_device = true;  // checks create device contexts (matters for fork)
  std::vector<Check> checks;

  Group(std::string n, std::string s) : name(std::move(n)), summary(std::move(s)) {}
  Group& add(std::string check_name, CheckFn fn) {
    checks.push_back({std::move(check_name), std::move(fn)});
    return *this;
  }
};

// All groups in the order they run. One function per group_*.cpp file.
std::vector<Group> all_groups();
Group packaging_group();
Group handshake_group();
Group struct_size_group();
Group errors_group();
Group device_group();
Group memory_group();
Group copies_group();
Group streams_group();
Group stress_group();
Group collectives_group();
Group graphs_group();
Group profiler_group();
Group ipc_group();
Group lifecycle_group();

}  // namespace conformance
