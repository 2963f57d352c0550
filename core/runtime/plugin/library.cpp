#include "plugin/library.h"

#define BOOST_DLL_USE_STD_FS 1
#include <boost/dll/shared_library.hpp>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <vector>

#include "error.h"

namespace flagos::plugin {
namespace {

struct OpenLibraries {
  std::mutex mutex;
  // Leaked on purpose (see header): the libraries stay mapped until exit.
  std::map<std::string, std::pair<boost::dll::shared_library*, OpenedLibrary>> by_identity;
  // Libraries refused for lacking the entry symbol, kept mapped (and reachable,
  // so a leak checker does not count them).
  std::vector<boost::dll::shared_library*> refused;
};

OpenLibraries& open_libraries() {
  static auto* libs = new OpenLibraries;
  return *libs;
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("the library file does not exist");
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

}  // namespace

OpenedLibrary open_library(const std::string& path) {
  const std::string identity = file_identity(path);
  OpenLibraries& libs = open_libraries();
  std::lock_guard<std::mutex> lock(libs.mutex);
  if (auto it = libs.by_identity.find(identity); it != libs.by_identity.end())
    return it->second.second;

  auto* lib = new boost::dll::shared_library;
  try {
    lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    delete lib;
    // Boost.DLL's message carries dlerror()'s text, e.g. a missing DT_NEEDED.
    throw Error(std::string("cannot load the library: ") + e.what());
  }
  if (!lib->has(FLAGOS_PLUGIN_ENTRY_SYMBOL)) {
    // Keep it loaded anyway: unloading a library whose initialisers ran is the
    // riskier choice, and the mapping is small.
    libs.refused.push_back(lib);
    throw Error("the library does not export " FLAGOS_PLUGIN_ENTRY_SYMBOL
                "; build it with cmake/FlagosPlugin.cmake or export that symbol");
  }
  OpenedLibrary opened;
  opened.entry = lib->get<flagos_status_t(const flagos_host_info_t*, const flagos_plugin_api_t**)>(
      FLAGOS_PLUGIN_ENTRY_SYMBOL);
  opened.identity = identity;
  libs.by_identity.emplace(identity, std::make_pair(lib, opened));
  return opened;
}

}  // namespace flagos::plugin
