// The ascend adapter creating every event without ACL_EVENT_TIME_LINE (as if
// ACL's timing were opt-out, like CUDA's). Conformance on the simulated
// AscendCL must fail, naming the rule that only TIME_LINE events are timed.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/ascend.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

int untimed(Event* e, unsigned /*flags*/) {
  if (int rc = ready()) return rc;
  return g_create_event_with_flag(e, kEventSync);
}

const char* adapt_broken(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  rt->event_create_with_flags = &untimed;
  return missing;
}

}  // namespace

void break_table(Vendor& v) {
  v.name = "ascend_untimed_events";
  v.adapt = &adapt_broken;
}

}  // namespace flagos_cudalike
