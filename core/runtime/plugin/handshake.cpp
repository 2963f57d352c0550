#include "plugin/handshake.h"

#include <algorithm>

namespace flagos::plugin {
namespace {

std::string version_string(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace

std::string validate_table(const flagos_plugin_api_t* api) {
  const std::string ours = version_string(FLAGOS_ABI_MAJOR, FLAGOS_ABI_MINOR);
  if (!api) return "the entry point returned success but no table";
  if (api->abi_major != FLAGOS_ABI_MAJOR)
    return "built for plugin ABI " + version_string(api->abi_major, api->abi_minor) +
           ", this torch_fl speaks ABI " + ours + "; rebuild the plugin against this torch_fl's include/";
#if FLAGOS_ABI_MIN_SUPPORTED_MINOR > 0  // nothing is older than 1.0 yet
  if (api->abi_minor < FLAGOS_ABI_MIN_SUPPORTED_MINOR)
    return "built for plugin ABI " + version_string(api->abi_major, api->abi_minor) +
           ", older than the oldest supported " +
           version_string(FLAGOS_ABI_MAJOR, FLAGOS_ABI_MIN_SUPPORTED_MINOR);
#endif
  const size_t needed = FLAGOS_PLUGIN_API_MIN_SIZE(api->abi_minor);
  if (api->struct_size < needed)
    return "function table is " + std::to_string(api->struct_size) + " bytes, ABI " +
           version_string(api->abi_major, api->abi_minor) + " needs at least " +
           std::to_string(needed) + " (stale struct_size?)";
#define FLAGOS_CHECK_REQUIRED(member, required) \
  if (required && !api->member) return "required member '" #member "' is NULL";
  FLAGOS_PLUGIN_API_1_0_FUNCTIONS(FLAGOS_CHECK_REQUIRED)
#undef FLAGOS_CHECK_REQUIRED
  if (!api->name || !*api->name) return "the table has no plugin name";
  return {};
}

std::uint32_t effective_minor(const flagos_plugin_api_t& api) {
  return std::min<std::uint32_t>(api.abi_minor, FLAGOS_ABI_MINOR);
}

}  // namespace flagos::plugin
