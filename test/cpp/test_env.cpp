// The registry's parsing rules (docs/environment-variables.md): booleans,
// empty-means-unset, bad values warn once and use the default.
#include "catch.hpp"
#include "env/registry.h"
#include "error.h"
#include "routing/table.h"
#include "test_support.h"

using flagos::test::CapturedLog;
using flagos::test::ScopedEnv;

TEST_CASE("every declared variable is FLAGOS_-prefixed, unique and documented", "[env]") {
  const auto& vars = flagos::env::variables();
  REQUIRE(!vars.empty());
  for (size_t i = 0; i < vars.size(); ++i) {
    CHECK(vars[i].name.substr(0, 7) == "FLAGOS_");
    CHECK(!vars[i].purpose.empty());
    CHECK(!vars[i].default_doc.empty());
    for (size_t j = i + 1; j < vars.size(); ++j) CHECK(vars[i].name != vars[j].name);
  }
}

TEST_CASE("reading an undeclared variable is an internal error", "[env]") {
  CHECK_THROWS_AS(flagos::env::raw("FLAGOS_NOT_A_VARIABLE"), flagos::Error);
}

TEST_CASE("empty means unset", "[env]") {
  ScopedEnv env("FLAGOS_PLUGIN", "");
  CHECK(!flagos::env::raw("FLAGOS_PLUGIN").has_value());
  CHECK(flagos::env::get_string("FLAGOS_PLUGIN").empty());
}

TEST_CASE("comma lists are trimmed and drop empty items", "[env]") {
  ScopedEnv env("FLAGOS_PLUGIN_OPTIONS", " a=1 ,, b=2 ,");
  auto items = flagos::env::get_list("FLAGOS_PLUGIN_OPTIONS");
  REQUIRE(items.size() == 2);
  CHECK(items[0] == "a=1");
  CHECK(items[1] == "b=2");
}

TEST_CASE("every declared variable has a group, a Default text and consistent choices", "[env]") {
  for (const auto& v : flagos::env::variables()) {
    INFO(std::string(v.name));
    CHECK(!v.group.empty());
    CHECK(v.choices.empty() == (v.type != flagos::env::Type::Enum && std::string(v.name) != "FLAGOS_LOG"));
    if (v.type == flagos::env::Type::Bool) CHECK((v.default_value == "1" || v.default_value == "0"));
  }
}

TEST_CASE("booleans: the spec's words in any case, anything else warns once and defaults", "[env]") {
  for (const char* on : {"1", "true", "TRUE", "On", "yes", "YES"}) {
    ScopedEnv env("FLAGOS_TRACE", on);
    CHECK(flagos::env::get_bool("FLAGOS_TRACE"));
  }
  for (const char* off : {"0", "false", "OFF", "No"}) {
    ScopedEnv env("FLAGOS_ALIAS_CUDA", off);
    CHECK(!flagos::env::get_bool("FLAGOS_ALIAS_CUDA"));
  }
  CapturedLog log;
  {
    ScopedEnv env("FLAGOS_ALIAS_CUDA", "");  // empty is the default (on), not off
    CHECK(flagos::env::get_bool("FLAGOS_ALIAS_CUDA"));
  }
  CHECK(log.lines() == 0);
  ScopedEnv env("FLAGOS_ALIAS_CUDA", "cpp-test-2");
  CHECK(flagos::env::get_bool("FLAGOS_ALIAS_CUDA"));
  CHECK(flagos::env::get_bool("FLAGOS_ALIAS_CUDA"));
  CHECK(log.lines() == 1);
  CHECK(log.text().find("FLAGOS_ALIAS_CUDA='cpp-test-2' is not a boolean") != std::string::npos);
  CHECK(log.text().find("using the default (on)") != std::string::npos);
}

TEST_CASE("enums report their alternatives and use the default", "[env]") {
  CapturedLog log;
  {
    ScopedEnv env("FLAGOS_STARTUP_PROFILE", "Minimal");
    CHECK(flagos::env::get_string("FLAGOS_STARTUP_PROFILE") == "minimal");
  }
  ScopedEnv env("FLAGOS_STARTUP_PROFILE", "cpp-test-fast");
  CHECK(flagos::env::get_string("FLAGOS_STARTUP_PROFILE") == "full");
  CHECK(log.lines() == 1);
  CHECK(log.text().find("not one of full, minimal") != std::string::npos);
}

TEST_CASE("numbers: ints and floats parse fully or warn and default", "[env]") {
  CapturedLog log;
  {
    ScopedEnv env("FLAGOS_TILEOPS_CACHE_MAX", "64");
    CHECK(flagos::env::get_int("FLAGOS_TILEOPS_CACHE_MAX") == 64);
  }
  {
    ScopedEnv env("FLAGOS_TILEOPS_CACHE_MAX", "64k");
    CHECK(flagos::env::get_int("FLAGOS_TILEOPS_CACHE_MAX") == 512);
  }
  {
    ScopedEnv env("FLAGOS_BUILD_JOBS", std::nullopt);
    CHECK(!flagos::env::get_int_opt("FLAGOS_BUILD_JOBS").has_value());
  }
  {
    ScopedEnv env("FLAGOS_BPU_ACT_SCALE", "0.125");
    CHECK(flagos::env::get_float("FLAGOS_BPU_ACT_SCALE") == 0.125);
  }
  {
    ScopedEnv env("FLAGOS_BPU_ACT_SCALE", "nan");
    CHECK(flagos::env::get_float("FLAGOS_BPU_ACT_SCALE") == 0.05);
  }
  CHECK(log.lines() == 2);
}

TEST_CASE("FLAGOS_LOG keeps known entries and reports each unknown one once", "[env]") {
  CapturedLog log;
  ScopedEnv env("FLAGOS_LOG", "Dispatch, cpp-test-bogus ,fallback,dispatch");
  auto entries = flagos::env::get_list("FLAGOS_LOG");
  CHECK(entries == std::vector<std::string>{"dispatch", "fallback"});
  flagos::env::get_list("FLAGOS_LOG");
  CHECK(log.lines() == 1);
  CHECK(log.text().find("'cpp-test-bogus' names none of dispatch, fallback, op_cache") != std::string::npos);
}

TEST_CASE("a bad value is quoted printable and clipped, so its report stays one line", "[env]") {
  CapturedLog log;
  {
    ScopedEnv env("FLAGOS_TILEOPS_CACHE_MAX", "6\n[flagos] forged\x1b[2J");
    CHECK(flagos::env::get_int("FLAGOS_TILEOPS_CACHE_MAX") == 512);
  }
  ScopedEnv env("FLAGOS_LOG", std::string(100, 'x'));
  flagos::env::get_list("FLAGOS_LOG");
  CHECK(log.lines() == 2);
  CHECK(log.text().find("FLAGOS_TILEOPS_CACHE_MAX='6?[flagos] forged?[2J' is not an integer") != std::string::npos);
  CHECK(log.text().find("entry '" + std::string(40, 'x') + "...' names none of") != std::string::npos);
}

TEST_CASE("a bare FLAGOS_OP_ names no operator: the overrides skip it", "[env]") {
  ScopedEnv bare("FLAGOS_OP_", "cpu");
  ScopedEnv add("FLAGOS_OP_add__Tensor", "cpu");
  const auto overrides = flagos::routing::overrides_from_env();
  CHECK(overrides.per_op.size() == 1);
  CHECK(overrides.per_op.count("add.Tensor") == 1);
}

TEST_CASE("families, retired and foreign names are declared apart from owned variables", "[env]") {
  CHECK(flagos::env::find_family("FLAGOS_OP_add__Tensor") != nullptr);
  CHECK(flagos::env::find_family("FLAGOS_OP_") == nullptr);
  {
    ScopedEnv env("FLAGOS_OP_add__Tensor", "flaggems");
    CHECK(flagos::env::raw("FLAGOS_OP_add__Tensor") == std::optional<std::string>("flaggems"));
  }
  const auto* retired = flagos::env::find_retired("FLAGOS_LOG_DISPATCH");
  REQUIRE(retired != nullptr);
  CHECK(retired->successor == "FLAGOS_LOG");
  CHECK(flagos::env::find("FLAGOS_LOG_DISPATCH") == nullptr);
  const auto* gems = flagos::env::find_foreign("GEMS_VENDOR");
  REQUIRE(gems != nullptr);
  CHECK(gems->direction == flagos::env::Direction::SetIfUnset);
  CHECK(flagos::env::find_foreign("MACA_PATH")->fallback == "MACA_HOME");
  // A read with the wrong getter is a programming error, not a silent default.
  CHECK_THROWS_AS(flagos::env::get_bool("FLAGOS_LOG"), flagos::Error);
}
