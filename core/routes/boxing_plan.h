// What boxing needs to know about one operator's schema — which arguments
// are generators, which it writes, which returns are those written arguments,
// the operator's traits (boxing_call.h) — worked out once per routed
// operator (a RouteKernel holds one) instead of on every call.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/SmallVector.h>

#include <cstdint>

#include "routes/boxing_call.h"

namespace flagos::routes {

struct BoxingPlan {
  explicit BoxingPlan(const c10::OperatorHandle& op);

  c10::SmallVector<bool, 16> generator_arg;    // per argument: a (optional) Generator
  c10::SmallVector<int16_t, 4> written;        // arguments the op writes (in-place, out=)
  c10::SmallVector<int16_t, 2> return_of;      // per return: the written argument it is, or -1
  OpTraits traits;
  bool keeps_originals = false;                // a return is a written argument
};

}  // namespace flagos::routes
