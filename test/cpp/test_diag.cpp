// One [flagos] line per diagnostic, never a stack of repeats.
#include "catch.hpp"
#include "diag/log.h"
#include "test_support.h"

TEST_CASE("diagnostics are single [flagos] lines", "[diag]") {
  flagos::test::CapturedLog log;
  flagos::diag::warn("something odd");
  flagos::diag::info("something normal");
  CHECK(log.text() == "[flagos] something odd\n[flagos] something normal\n");
}

TEST_CASE("warn_once prints a key only the first time", "[diag]") {
  flagos::test::CapturedLog log;
  CHECK(flagos::diag::warn_once("test-key-1", "first"));
  CHECK_FALSE(flagos::diag::warn_once("test-key-1", "second"));
  CHECK(flagos::diag::warn_once("test-key-2", "other"));
  CHECK(log.lines() == 2);
}
