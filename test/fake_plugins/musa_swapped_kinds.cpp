// The musa vendor table with the host-to-device and device-to-host copy
// kinds swapped: a plugin built with a wrong enum value. Conformance on the
// simulated MUSA runtime must fail, naming the rule the runtime enforces.
#define vendor musa_vendor  // the table's own accessor, renamed
#include "../../plugins/cudalike/vendors/musa.cpp"
#undef vendor

namespace flagos_cudalike {

const Vendor& vendor() {
  static const Vendor swapped = [] {
    Vendor v = musa_vendor();
    v.name = "musa_swapped_kinds";
    v.memcpy_kind[1] = 2;  // FLAGOS_MEMCPY_HOST_TO_DEVICE as musaMemcpyDeviceToHost
    v.memcpy_kind[2] = 1;
    return v;
  }();
  return swapped;
}

}  // namespace flagos_cudalike
