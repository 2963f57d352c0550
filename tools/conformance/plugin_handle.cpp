#include "plugin_handle.h"

#include <dlfcn.h>

#include <cstring>

namespace conformance {

HostInfo::HostInfo(const Options& options, uint32_t abi_major, size_t tail_bytes,
                   unsigned char tail_fill) {
  for (const auto& kv : options) {
    keys_.push_back(kv.first);
    values_.push_back(kv.second);
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    key_ptrs_.push_back(keys_[i].c_str());
    value_ptrs_.push_back(values_[i].c_str());
  }
  flagos_host_info_t info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info + tail_bytes;
  info.abi_major = abi_major;
  info.abi_minor = FLAGOS_ABI_MINOR;
  info.host_name = FLAGOS_CONFORMANCE_NAME;
  info.host_version = FLAGOS_CONFORMANCE_VERSION;
  info.num_options = keys_.size();
  info.option_keys = key_ptrs_.empty() ? nullptr : key_ptrs_.data();
  info.option_values = value_ptrs_.empty() ? nullptr : value_ptrs_.data();
  // The struct lives in a byte buffer so that a tail can follow it.
  storage_.assign(sizeof info + tail_bytes, tail_fill);
  std::memcpy(storage_.data(), &info, sizeof info);
}

void HostInfo::scribble() {
  for (auto& k : keys_) k.assign(k.size(), 'X');
  for (auto& v : values_) v.assign(v.size(), 'X');
  std::memset(storage_.data(), 0xDB, storage_.size());
}

bool PluginHandle::open(std::string* error) {
  dlerror();
  dl_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dl_) {
    const char* e = dlerror();
    *error = std::string("dlopen failed: ") + (e ? e : "(no dlerror)");
    return false;
  }
  void* sym = dlsym(dl_, FLAGOS_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    *error = "entry symbol " FLAGOS_PLUGIN_ENTRY_SYMBOL " not found";
    return false;
  }
  entry_ = reinterpret_cast<flagos_plugin_get_api_fn>(sym);
  return true;
}

flagos_status_t PluginHandle::get_api(const flagos_plugin_api_t** api) const {
  HostInfo info(options_);
  return entry_(info.get(), api);
}

const std::string* PluginHandle::option(const std::string& key) const {
  for (const auto& kv : options_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const flagos_extension_t* find_extension(const flagos_plugin_api_t* api, int32_t type) {
  if (!api || !FLAGOS_HAS_MEMBER(flagos_plugin_api_t, api, extensions)) return nullptr;
  const flagos_extension_t* e = api->extensions;
  for (int hops = 0; e && hops < 256; ++hops, e = e->next) {
    if (e->struct_size >= FLAGOS_EXTENSION_SIZE_1_0 && e->type == type) return e;
  }
  return nullptr;
}

}  // namespace conformance
