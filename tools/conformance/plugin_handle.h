// plugin_handle.h — loading a plugin and calling its entry symbol.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flagos/flagos.h"

namespace conformance {

#define FLAGOS_CONFORMANCE_NAME "flagos-conformance"
#define FLAGOS_CONFORMANCE_VERSION "1.0.0"

using Options = std::vector<std::pair<std::string, std::string>>;

// A flagos_host_info_t plus the storage its pointers refer to. `tail_bytes`
// grows the struct as a newer host would (struct_size covers the tail), and
// `tail_fill` is what the tail holds.
class HostInfo {
 public:
  explicit HostInfo(const Options& options, uint32_t abi_major = FLAGOS_ABI_MAJOR,
                    size_t tail_bytes = 0, unsigned char tail_fill = 0);
  const flagos_host_info_t* get() const {
    return reinterpret_cast<const flagos_host_info_t*>(storage_.data());
  }
  flagos_host_info_t* mutable_info() {
    return reinterpret_cast<flagos_host_info_t*>(storage_.data());
  }
  // Overwrites the struct and every string it points to: host info is valid
  // only during the entry call, a plugin that kept pointers now reads junk.
  void scribble();

 private:
  std::vector<std::string> keys_, values_;
  std::vector<const char*> key_ptrs_, value_ptrs_;
  std::vector<unsigned char> storage_;
};

class PluginHandle {
 public:
  PluginHandle(std::string path, Options options)
      : path_(std::move(path)), options_(std::move(options)) {}
  PluginHandle(const PluginHandle&) = delete;
  PluginHandle& operator=(const PluginHandle&) = delete;

  // dlopen(RTLD_NOW | RTLD_LOCAL) and dlsym of the entry symbol. Never
  // dlclose'd: plugins are not required to support unloading.
  bool open(std::string* error);

  const std::string& path() const { return path_; }
  const Options& options() const { return options_; }
  void* dl() const { return dl_; }
  flagos_plugin_get_api_fn entry() const { return entry_; }

  // Calls the entry with this runner's host info and the user's options.
  flagos_status_t get_api(const flagos_plugin_api_t** api) const;
  // The value of option `key`, or nullptr when the user did not pass it.
  const std::string* option(const std::string& key) const;

 private:
  std::string path_;
  Options options_;
  void* dl_ = nullptr;
  flagos_plugin_get_api_fn entry_ = nullptr;
};

// The first extension of `type` in the table's chain, or nullptr. Walks at
// most a bounded number of links so a cyclic chain cannot hang the runner.
const flagos_extension_t* find_extension(const flagos_plugin_api_t* api, int32_t type);

}  // namespace conformance
