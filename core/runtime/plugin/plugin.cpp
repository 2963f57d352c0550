#include "plugin/plugin.h"

#include "diag/log.h"
#include "error.h"
#include "plugin/handshake.h"

namespace flagos::plugin {

std::uint32_t Plugin::effective_minor() const { return plugin::effective_minor(*api_); }

const flagos_extension_t* Plugin::find_extension(int32_t type) const {
  for (const flagos_extension_t* ext = api_->extensions; ext; ext = ext->next)
    if (ext->struct_size >= FLAGOS_EXTENSION_SIZE_1_0 && ext->type == type) return ext;
  return nullptr;
}

int32_t Plugin::device_count() const noexcept {
  int32_t count = 0;
  if (api_->device_count(&count) != FLAGOS_SUCCESS || count < 0) return 0;
  return count;
}

std::string Plugin::device_note() const {
  const auto* ext = reinterpret_cast<const flagos_diagnostics_ext_t*>(find_extension(FLAGOS_EXTENSION_DIAGNOSTICS));
  if (!ext || ext->base.struct_size < FLAGOS_DIAGNOSTICS_EXT_SIZE_1_1 || !ext->device_note) return {};
  device_count();  // the note is valid once devices were counted
  const char* note = ext->device_note();
  return note ? diag::printable(note, 400) : std::string();
}

void Plugin::check(flagos_status_t status, const char* call) const {
  if (status == FLAGOS_SUCCESS || status == FLAGOS_NOT_READY) return;
  const char* message = api_->last_error_message();
  std::string text = "plugin '" + name() + "': " + call + " failed with " +
                     flagos_status_name(status);
  if (message && *message) text += ": " + std::string(message);
  throw Error(text);
}

}  // namespace flagos::plugin
