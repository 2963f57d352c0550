// The plugin loader against real shared libraries: the host plugin and one
// fake plugin per defect (test/fake_plugins). Every refusal must be one
// clear message naming the plugin, its path and the cause, and must leave the
// process able to load the next plugin.
#include <filesystem>
#include <fstream>

#include "catch.hpp"
#include "diag/log.h"
#include "error.h"
#include "plugin/loader.h"
#include "test_support.h"

using flagos::Error;
using flagos::plugin::Candidate;
using flagos::plugin::Origin;
namespace fs = std::filesystem;

namespace {

std::string load_error(const std::string& mode) {
  try {
    flagos::plugin::load({"fake_" + mode, flagos::test::fake_plugin(mode), Origin::Explicit}, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "<loaded>";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("the host plugin loads and reports its devices", "[loader]") {
  auto plugin = flagos::plugin::load({"host", flagos::test::host_plugin(), Origin::BuildDir},
                                     {{"devices", "3"}});
  CHECK(plugin->name() == "host");
  CHECK(std::string(plugin->api().name) == "host");
  CHECK(plugin->effective_minor() == FLAGOS_ABI_MINOR);
  CHECK(plugin->device_count() == 3);
}

TEST_CASE("a plugin of another ABI major is refused with both versions named", "[loader]") {
  const std::string why = load_error("wrong_major");
  CHECK(contains(why, "[flagos] plugin 'fake_wrong_major'"));
  CHECK(contains(why, "libflagos_fake_wrong_major.so"));
  CHECK(contains(why, "built for plugin ABI 2." + std::to_string(FLAGOS_ABI_MINOR)));
  CHECK(contains(why, "speaks ABI 1." + std::to_string(FLAGOS_ABI_MINOR)));
}

TEST_CASE("a table too short for the required members is refused", "[loader]") {
  const std::string why = load_error("short_table");
  CHECK(contains(why, "function table is"));
  CHECK(contains(why, "needs at least"));
}

TEST_CASE("a NULL required member is refused by name", "[loader]") {
  CHECK(contains(load_error("null_required"), "required member 'mem_alloc' is NULL"));
}

TEST_CASE("an entry point that fails reports the plugin's own message", "[loader]") {
  const std::string why = load_error("entry_fails");
  CHECK(contains(why, "entry point failed with RUNTIME_UNAVAILABLE"));
  CHECK(contains(why, "libfakevendor.so.3: cannot open shared object file"));
}

TEST_CASE("a library without the entry symbol is refused", "[loader]") {
  CHECK(contains(load_error("no_entry"), "does not export flagos_plugin_get_api"));
}

TEST_CASE("a missing vendor runtime library surfaces the dynamic loader's reason", "[loader]") {
  const std::string why = load_error("missing_dep");
  CHECK(contains(why, "cannot load the library"));
  CHECK(contains(why, "libfake_vendor_runtime.so"));
}

TEST_CASE("a missing file is reported, not crashed on", "[loader]") {
  try {
    flagos::plugin::load({"ghost", "/nonexistent/libflagos_ghost.so", Origin::Explicit}, {});
    FAIL("loaded a file that does not exist");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "plugin 'ghost' (/nonexistent/libflagos_ghost.so)"));
    CHECK(contains(e.what(), "does not exist"));
  }
}

TEST_CASE("a plugin from a newer minor loads and is used at the core's minor", "[loader]") {
  auto plugin = flagos::plugin::load(
      {"fake_future_minor", flagos::test::fake_plugin("future_minor"), Origin::Explicit}, {});
  CHECK(plugin->api().abi_minor == FLAGOS_ABI_MINOR + 7);
  CHECK(plugin->effective_minor() == FLAGOS_ABI_MINOR);
}

TEST_CASE("a plugin built against the frozen v1.0 headers loads", "[loader]") {
  auto plugin = flagos::plugin::load(
      {"fake_frozen_v1_0", flagos::test::fake_plugin("frozen_v1_0"), Origin::Explicit}, {});
  CHECK(plugin->api().abi_major == 1);
  CHECK(plugin->device_count() == 0);
}

TEST_CASE("loading through a symlink yields the same plugin (file identity)", "[loader]") {
  const fs::path link = fs::temp_directory_path() / "libflagos_fake_ok_link.so";
  fs::remove(link);
  fs::create_symlink(flagos::test::fake_plugin("ok"), link);
  auto direct = flagos::plugin::load({"fake_ok", flagos::test::fake_plugin("ok"), Origin::Explicit}, {});
  auto linked = flagos::plugin::load({"fake_ok", link.string(), Origin::Explicit}, {});
  CHECK(direct.get() == linked.get());
  fs::remove(link);
}

TEST_CASE("the process keeps loading plugins after refusals", "[loader]") {
  (void)load_error("wrong_major");
  (void)load_error("missing_dep");
  auto plugin = flagos::plugin::load({"fake_ok", flagos::test::fake_plugin("ok"), Origin::Explicit}, {});
  CHECK(plugin->device_count() == 0);
}

TEST_CASE("discovery finds plugins/<name>/libflagos_<name>.so, entry points first", "[loader]") {
  const std::string dir = FLAGOS_TEST_PLUGIN_DIR;
  auto found = flagos::plugin::discover({dir}, {{"wheel", "/opt/x/libflagos_wheel.so", Origin::BuildDir}});
  REQUIRE(found.size() >= 9);
  CHECK(found[0].name == "wheel");
  CHECK(found[0].origin == Origin::EntryPoint);
  bool saw_ok = false;
  for (const auto& c : found) saw_ok |= c.name == "fake_ok" && c.origin == Origin::BuildDir;
  CHECK(saw_ok);
  CHECK(flagos::plugin::discover({"/nonexistent"}, {}).empty());
}

TEST_CASE("discovery reads a plugin's requirements beside it, without loading it", "[loader]") {
  const fs::path root = fs::temp_directory_path() / "flagos_requires_test";
  fs::remove_all(root);
  // Three copies of a plugin: requirements unmet, met, and unreadable.
  for (const char* name : {"unmet", "met", "garbled"}) {
    fs::create_directories(root / name);
    fs::copy_file(flagos::test::fake_plugin("ok"), root / name / ("libflagos_" + std::string(name) + ".so"));
  }
  std::ofstream(root / "unmet" / "libflagos_unmet.toml")
      << "[requires]\nany_path = [\"/nonexistent/driver\", \"/nonexistent/dev\"]\nbecause = \"no vendor driver\"\n";
  std::ofstream(root / "met" / "libflagos_met.toml") << "[requires]\nany_path = [\"/nonexistent\", \"/\"]\n";
  std::ofstream(root / "garbled" / "libflagos_garbled.toml") << "[requires\n";
  std::string log;
  flagos::diag::capture_for_testing(&log);
  const auto found = flagos::plugin::discover({root.string()}, {});
  flagos::diag::capture_for_testing(nullptr);
  REQUIRE(found.size() == 3);
  CHECK(found[0].name == "garbled");
  CHECK(found[0].unavailable.empty());
  CHECK(contains(log, "plugin requirements " + (root / "garbled" / "libflagos_garbled.toml").string() + ":1: "));
  CHECK(contains(log, "; loading the plugin without checking them"));
  CHECK(found[1].name == "met");
  CHECK(found[1].unavailable.empty());
  CHECK(found[2].name == "unmet");
  CHECK(found[2].unavailable == "no vendor driver (none of /nonexistent/driver, /nonexistent/dev exists)");
  fs::remove_all(root);
}

TEST_CASE("FLAGOS_PLUGIN_OPTIONS becomes key/value options, bad items warn once", "[loader]") {
  flagos::test::ScopedEnv env("FLAGOS_PLUGIN_OPTIONS", "devices=4, strict=1,bogus,=x");
  flagos::test::CapturedLog log;
  auto options = flagos::plugin::options_from_env();
  REQUIRE(options.size() == 2);
  CHECK(options[0] == std::make_pair(std::string("devices"), std::string("4")));
  CHECK(options[1] == std::make_pair(std::string("strict"), std::string("1")));
  CHECK(log.lines() == 2);
  CHECK(contains(log.text(), "[flagos] FLAGOS_PLUGIN_OPTIONS item 'bogus' is not key=value"));
}
