// A loaded, handshaken plugin: the library (never unloaded), its table and
// the checked-call helper the rest of the core uses to talk to it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flagos/flagos.h"

namespace flagos::plugin {

// Where a plugin was found; decides how loudly a failure is reported.
enum class Origin { BuildDir, EntryPoint, Explicit };

struct Candidate {
  std::string name;  // "host", "cuda", ... (from libflagos_<name>.so or the entry point)
  std::string path;  // absolute path of the shared library
  Origin origin = Origin::BuildDir;
  // Why it cannot run here, from the requirements beside it (<library>.toml),
  // checked without loading it; "" when it may.
  std::string unavailable;
};

using Options = std::vector<std::pair<std::string, std::string>>;

class Plugin {
 public:
  Plugin(Candidate candidate, const flagos_plugin_api_t* api, Options options)
      : candidate_(std::move(candidate)), api_(api), options_(std::move(options)) {}

  const std::string& name() const { return candidate_.name; }
  const std::string& path() const { return candidate_.path; }
  Origin origin() const { return candidate_.origin; }
  const Options& options() const { return options_; }
  const flagos_plugin_api_t& api() const { return *api_; }
  std::uint32_t effective_minor() const;
  const flagos_extension_t* find_extension(int32_t type) const;

  // device_count that never throws: a failing plugin reports 0 devices (the
  // c10 contract for deviceCount).
  int32_t device_count() const noexcept;

  // Why the plugin sees the devices it sees (FLAGOS_EXTENSION_DIAGNOSTICS),
  // printable; "" when it found devices or does not say.
  std::string device_note() const;

  // Throws flagos::Error naming the plugin, the call and the plugin's own
  // message when `status` is an error. FLAGOS_NOT_READY is not an error.
  void check(flagos_status_t status, const char* call) const;

 private:
  Candidate candidate_;
  const flagos_plugin_api_t* api_;
  Options options_;
};

}  // namespace flagos::plugin
