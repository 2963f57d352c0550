// libtopsrt.so: Enflame TopsRider. Values: EnflameTechnology/tops-codec-headers
// include/tops/tops_runtime_api.h (topsError_t, topsDeviceAttribute_t, the
// stream, event and topsHostMalloc flags). HIP-derived; differs from CUDA in
// error names, attribute ids and pinned-allocation flags, and exports no
// stream priorities and no LaunchHostFunc (CMakeLists.txt hides those): host
// work is enqueued with topsStreamAddCallback(stream, callback, user, flags),
// whose flags must be 0 (HIP's hipStreamAddCallback documents the same).
#include <new>

#include "exports.h"

namespace {

const simrt::Vendor kTops = {
    "gcu", "tops", "GCU", "topsMemcpyKind",
    {{0, "topsSuccess"},
     {1, "topsErrorInvalidValue"},
     {2, "topsErrorOutOfMemory"},
     {3, "topsErrorNotInitialized"},
     {21, "topsErrorInvalidMemcpyDirection"},
     {100, "topsErrorNoDevice"},
     {101, "topsErrorInvalidDevice"},
     {400, "topsErrorInvalidHandle"},
     {600, "topsErrorNotReady"},
     {704, "topsErrorPeerAccessAlreadyEnabled"},
     // topsError_t has no NotPermitted: NotSupported stands in, as for HIP.
     {801, "topsErrorNotSupported"},
     {801, "topsErrorNotSupported"}},
    /*kinds h2h,h2d,d2h,d2d,default*/ 0, 1, 2, 3, 4,
    /*stream flags: NonBlocking|CallbackBlocking|NonMerging; topsStreamNonBlocking*/ 0x7, 0x1,
    /*event flags: BlockingSync|DisableTiming|Interprocess|RecordOnce|StrongOrder|
      DisableQueryAndSync|ReleaseToDevice|ReleaseToSystem; DisableTiming, Interprocess*/ 0xC000003Fu, 0x2, 0x4,
    /*topsHostMalloc: Portable|Mapped|WriteCombined|NumaUser|Coherent|NonCoherent*/ 0xE0000007u,
    /*attr: cc major, minor, multiprocessors; no PCI ids (-1)*/ {1, 2, 10, -1, -1, -1},
    /*priority least, greatest: none*/ 0, 0,
    /*reported cc, cluster count*/ 3, 0, 24,
};

}  // namespace

SIMRT_RUNTIME_EXPORTS(tops, kTops)
SIMRT_EXPORT_HOST_ALLOC_FLAGS(topsHostMalloc, kTops)
SIMRT_EXPORT_FREE_HOST(topsHostFree, kTops)
SIMRT_EXPORT_DEVICE_NAME(topsDeviceGetName, kTops, false)
SIMRT_EXPORT_TOTAL_MEM(topsDeviceTotalMem, kTops, false)

namespace {

using StreamCallback = void (*)(void* stream, int status, void* user);

struct Callback {
  StreamCallback fn;
  void* stream;
  void* user;
};

void run_callback(void* data) {
  Callback* c = static_cast<Callback*>(data);
  c->fn(c->stream, 0, c->user);
  delete c;
}

}  // namespace

SIMRT_EXPORT int topsStreamAddCallback(void* stream, StreamCallback fn, void* user, unsigned flags) {
  if (flags != 0)
    return simrt::rule_violation(kTops, "topsStreamAddCallback", simrt::Err::InvalidValue, "flags must be 0");
  Callback* c = new (std::nothrow) Callback{fn, stream, user};
  if (c == nullptr) return 2;  // topsErrorOutOfMemory
  const int err = simrt::launch_host_func(kTops, "topsStreamAddCallback", stream, &run_callback, c);
  if (err != 0) delete c;
  return err;
}
