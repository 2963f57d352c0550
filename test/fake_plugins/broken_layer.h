// A real vendor table whose layer makes one wrong runtime call: the fixture
// wraps one resolved call of runtime.h (after the loader resolved them all)
// with a defective version, as a plugin with a bug in one api_*.cpp would
// call it. Use: define BROKEN_TABLE_BASE and FLAGOS_BROKEN_NAME, then
// FLAGOS_BREAK_CALL(member, wrapper) where `wrapper` may call `original`.
#pragma once

#include "broken_table.h"
#include "runtime.h"

#define FLAGOS_BREAK_CALL(member, ...)                                                  \
  namespace {                                                                         \
  [[maybe_unused]] decltype(flagos_cudalike::Runtime::member) original = nullptr;     \
  const auto wrapper = __VA_ARGS__;                                                   \
  const char* adapt(void*, flagos_cudalike::Runtime* rt) {                            \
    original = rt->member;                                                            \
    rt->member = wrapper;                                                             \
    return nullptr;                                                                   \
  }                                                                                   \
  }                                                                                   \
  void flagos_cudalike::break_table(Vendor& v) {                                      \
    v.name = FLAGOS_BROKEN_NAME;                                                      \
    v.adapt = &adapt;                                                                 \
  }
