// The registry's parsing rules (spec/environment-variables.txt): booleans,
// empty-means-unset, bad values warn once and use the default.
#include "catch.hpp"
#include "env/registry.h"
#include "error.h"
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
