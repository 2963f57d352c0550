// A process without torch that drives a CUDA-shaped plugin's activity
// tracer (FLAGOS_EXTENSION_PROFILER over CUPTI) the way the core does, with
// a real kernel: one launched through the CUDA driver on the plugin's
// stream, plus a memset through the plugin. Without torch there is no other
// CUPTI client, so the plugin's own tracer runs. Prints what it recorded;
// exits non-zero naming the first expectation that failed.
//   tracer_probe <libflagos_cuda.so>
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "flagos/ext/profiler.h"
#include "flagos/plugin_api.h"

namespace {

// An empty kernel in PTX, compiled by the driver at load.
const char kPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry flagos_tracer_probe()\n{\n  ret;\n}\n";

int failed(const char* what, const flagos_plugin_api_t* api = nullptr) {
  const char* m = api != nullptr ? api->last_error_message() : nullptr;
  std::fprintf(stderr, "tracer_probe: %s%s%s\n", what, m && *m ? ": " : "", m ? m : "");
  return 1;
}

template <class Fn>
Fn sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return failed("usage: tracer_probe <plugin library>");
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) return failed(dlerror());
  auto entry = sym<flagos_plugin_get_api_fn>(plugin, FLAGOS_PLUGIN_ENTRY_SYMBOL);
  flagos_host_info_t host{};
  host.struct_size = sizeof host;
  host.abi_major = FLAGOS_ABI_MAJOR;
  host.abi_minor = FLAGOS_ABI_MINOR;
  host.host_name = "tracer_probe";
  host.host_version = "1";
  const flagos_plugin_api_t* api = nullptr;
  if (entry == nullptr || entry(&host, &api) != FLAGOS_SUCCESS) return failed("handshake");
  const flagos_profiler_ext_t* prof = nullptr;
  for (const flagos_extension_t* e = api->extensions; e != nullptr; e = e->next)
    if (e->type == FLAGOS_EXTENSION_PROFILER) prof = reinterpret_cast<const flagos_profiler_ext_t*>(e);
  if (prof == nullptr) return failed("the plugin chains no profiler extension");

  flagos_stream_t stream = nullptr;
  void* native = nullptr;
  void* buf = nullptr;
  if (api->stream_create(0, 0, &stream) != FLAGOS_SUCCESS) return failed("stream_create", api);
  if (api->stream_native_handle(stream, &native) != FLAGOS_SUCCESS) return failed("stream_native_handle", api);
  if (api->mem_alloc(0, 1 << 20, &buf) != FLAGOS_SUCCESS) return failed("mem_alloc", api);

  // The driver's module and launch calls, on the primary context the plugin made current.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) return failed(dlerror());
  auto ctx_get = sym<int (*)(void**)>(cuda, "cuCtxGetCurrent");
  auto load = sym<int (*)(void**, const void*)>(cuda, "cuModuleLoadData");
  auto get_fn = sym<int (*)(void**, void*, const char*)>(cuda, "cuModuleGetFunction");
  auto launch = sym<int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                            void**, void**)>(cuda, "cuLaunchKernel");
  void* ctx = nullptr;
  void* module = nullptr;
  void* fn = nullptr;
  auto retain = sym<int (*)(void**, int)>(cuda, "cuDevicePrimaryCtxRetain");
  auto ctx_set = sym<int (*)(void*)>(cuda, "cuCtxSetCurrent");
  if (ctx_get(&ctx) != 0 || ctx == nullptr) {  // the plugin's device scope may have left none current
    if (retain(&ctx, 0) != 0 || ctx_set(ctx) != 0) return failed("no CUDA context for device 0");
  }
  if (load(&module, kPtx) != 0 || get_fn(&fn, module, "flagos_tracer_probe") != 0)
    return failed("loading the PTX kernel");

  flagos_profiler_t p = nullptr;
  if (prof->profiler_create(nullptr, &p) != FLAGOS_SUCCESS) return failed("profiler_create", api);
  int64_t before = 0, after = 0;
  prof->clock_now(&before);
  if (prof->profiler_start(p, FLAGOS_PROFILE_STREAM_WORK) != FLAGOS_SUCCESS) return failed("profiler_start", api);
  prof->push_correlation(77);
  for (int i = 0; i < 3; ++i)
    if (launch(fn, 1, 1, 1, 32, 1, 1, 0, native, nullptr, nullptr) != 0) return failed("cuLaunchKernel");
  prof->pop_correlation(nullptr);
  prof->push_correlation(78);
  if (api->memset_async(buf, 7, 4096, stream) != FLAGOS_SUCCESS) return failed("memset_async", api);
  prof->pop_correlation(nullptr);
  if (api->stream_synchronize(stream) != FLAGOS_SUCCESS) return failed("stream_synchronize", api);
  if (prof->profiler_stop(p) != FLAGOS_SUCCESS) return failed("profiler_stop", api);
  prof->clock_now(&after);
  const flagos_activity_record_t* records = nullptr;
  size_t count = 0, stride = 0;
  uint64_t dropped = 0;
  if (prof->profiler_collect(p, &records, &count, &stride, &dropped) != FLAGOS_SUCCESS)
    return failed("profiler_collect", api);
  int kernels = 0, memsets = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto* r = reinterpret_cast<const flagos_activity_record_t*>(reinterpret_cast<const char*>(records) +
                                                                      i * stride);
    std::printf("record kind=%d name=%s stream_is_ours=%d correlation=%llu bytes=%lld dur_ns=%lld in_window=%d\n",
                r->kind, r->name, r->stream == stream, static_cast<unsigned long long>(r->correlation_id),
                static_cast<long long>(r->bytes), static_cast<long long>(r->end_ns - r->begin_ns),
                r->begin_ns >= before && r->end_ns <= after);
    const bool ours = r->stream == stream && r->begin_ns >= before && r->end_ns <= after && r->begin_ns <= r->end_ns;
    if (r->kind == FLAGOS_ACTIVITY_KERNEL && ours && r->correlation_id == 77 &&
        std::strcmp(r->name, "flagos_tracer_probe") == 0)
      ++kernels;
    if (r->kind == FLAGOS_ACTIVITY_MEMSET && ours && r->correlation_id == 78 && r->bytes == 4096) ++memsets;
  }
  std::printf("kernels=%d memsets=%d dropped=%llu\n", kernels, memsets, static_cast<unsigned long long>(dropped));
  prof->profiler_destroy(p);
  if (kernels != 3) return failed("want 3 KERNEL records of flagos_tracer_probe on the stream under correlation 77");
  if (memsets != 1) return failed("want 1 MEMSET record of 4096 bytes on the stream under correlation 78");
  std::printf("tracer_probe: ok\n");
  return 0;
}
