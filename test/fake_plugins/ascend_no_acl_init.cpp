// The ascend adapter calling aclInit only where devices are counted: that is
// the probe's process, so the process that loaded the plugin never calls it.
// Conformance on the simulated AscendCL must fail, naming the aclInit rule.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/ascend.cpp"
#include "broken_table.h"

namespace flagos_cudalike {
namespace {

int (*g_real_init)(const char*) = nullptr;

int count_after_init(int* count) {
  const int rc = g_real_init(nullptr);
  return rc != 0 && rc != kRepeatInitialize ? rc : get_device_count(count);
}

const char* adapt_broken(void* library, Runtime* rt) {
  const char* missing = adapt(library, rt);
  g_real_init = g_init;
  g_init = [](const char*) { return 0; };
  rt->get_device_count = &count_after_init;
  return missing;
}

}  // namespace

void break_table(Vendor& v) {
  v.name = "ascend_no_acl_init";
  v.adapt = &adapt_broken;
}

}  // namespace flagos_cudalike
