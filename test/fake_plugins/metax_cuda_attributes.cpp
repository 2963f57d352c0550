// The metax table with CUDA's cudaDeviceAttr ids instead of
// mcDeviceAttribute_t's: the simulated MACA runtime refuses the ids it does
// not number, and the plugin is left with compute capability 0.0.
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/metax.cpp"
#include "broken_table.h"

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "metax_cuda_attributes";
  v.attr_major = 75;  // cudaDevAttrComputeCapabilityMajor
  v.attr_minor = 76;
  v.attr_multiprocessors = 16;
  v.attr_pci_domain = 50;
  v.attr_pci_bus = 33;
  v.attr_pci_device = 34;
}
