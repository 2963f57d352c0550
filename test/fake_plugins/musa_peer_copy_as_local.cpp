// The musa layer sends copies between devices through musaMemcpyAsync on the
// destination's stream, forgetting musaMemcpyPeerAsync: the simulated MUSA
// runtime refuses a pointer of one device on a stream of another (the device
// rule).
#define BROKEN_TABLE_BASE "../../plugins/cudalike/vendors/musa.cpp"
#include "broken_table.h"
#include "runtime.h"

namespace {

int (*g_memcpy_async)(void*, const void*, size_t, int, flagos_cudalike::rt_stream) = nullptr;
int g_device_to_device = -1;

int peer_as_local(void* dst, int, const void* src, int, size_t n, flagos_cudalike::rt_stream s) {
  return g_memcpy_async(dst, src, n, g_device_to_device, s);
}

const char* adapt(void*, flagos_cudalike::Runtime* rt) {
  g_memcpy_async = rt->memcpy_async;
  rt->memcpy_peer_async = &peer_as_local;
  return nullptr;
}

}  // namespace

void flagos_cudalike::break_table(Vendor& v) {
  v.name = "musa_peer_copy_as_local";
  g_device_to_device = v.memcpy_kind[3];
  v.adapt = &adapt;
}
