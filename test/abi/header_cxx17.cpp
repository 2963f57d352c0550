// The public headers compile as C++17 with every warning an error.
#include "flagos/flagos.h"

static_assert(FLAGOS_ABI_MAJOR == 1, "major");
static_assert(sizeof(flagos_status_t) == 4, "status is int32_t");

int flagos_header_cxx17_probe() {
  flagos_device_properties_t props{};
  props.struct_size = sizeof(props);
  return FLAGOS_HAS_MEMBER(flagos_device_properties_t, &props, interop_device_index) ? 1 : 0;
}
