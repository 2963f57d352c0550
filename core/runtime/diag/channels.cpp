#include "diag/channels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "env/registry.h"

namespace flagos::diag {

bool channel_enabled(std::string_view channel) {
  static const std::vector<std::string> entries = env::get_list("FLAGOS_LOG");
  return std::find(entries.begin(), entries.end(), channel) != entries.end();
}

}  // namespace flagos::diag
