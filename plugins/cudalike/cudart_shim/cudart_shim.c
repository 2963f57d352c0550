/* libcudart.so.12 for MetaX: a generic PyTorch CUDA 12 build binds its CUDA
 * runtime calls by version (cudaMalloc@libcudart.so.12), and MACA's
 * cu-bridge (libsymbol_cu.so) exports the same names untagged, so the
 * loader refuses it. This library has the soname and the version node those
 * references need, and forwards every call, unchanged, to the bridge.
 *
 * It must be in the process before torch's CUDA libraries: the loader then
 * satisfies their DT_NEEDED libcudart.so.12 with it. torch_fl loads it at
 * interpreter start-up when FLAGOS_METAX_CUDART_SHIM=1 (_torch_fl_startup.py);
 * LD_PRELOAD=<this file> does the same for any program.
 *
 * Each export is a jump through a slot filled once, when the library loads,
 * from the bridge: no signature is restated here, and arguments pass through
 * untouched. The bridge is searched in $MACA_PATH/lib, $MACA_HOME/lib,
 * /opt/maca/lib, then by name on the loader's path. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"

#define BRIDGE "libsymbol_cu.so"
#define CUDA_ERROR_NOT_SUPPORTED 801 /* cudaErrorNotSupported */

/* A function the bridge lacks: a status call reports "not supported"... */
static int missing_status(void) { return CUDA_ERROR_NOT_SUPPORTED; }

/* ...any other stops the process, since no return value would be honest. */
static void missing_other(void) {
  fputs("[flagos] libcudart.so.12 shim: a CUDA runtime function that " BRIDGE
        " does not provide was called (named when the shim loaded); stopping\n",
        stderr);
  abort();
}

/* One slot per export, read by its trampoline. */
#define FLAGOS_SHIM_SLOT_STATUS(name) \
  __attribute__((visibility("hidden"))) void* flagos_cudart_shim_to_##name = (void*)missing_status;
#define FLAGOS_SHIM_SLOT_OTHER(name) \
  __attribute__((visibility("hidden"))) void* flagos_cudart_shim_to_##name = (void*)missing_other;
FLAGOS_CUDART_SHIM_STATUS(FLAGOS_SHIM_SLOT_STATUS)
FLAGOS_CUDART_SHIM_OTHER(FLAGOS_SHIM_SLOT_OTHER)

#if defined(__x86_64__)
#define FLAGOS_SHIM_JUMP(name) "\tjmp *flagos_cudart_shim_to_" #name "(%rip)\n"
#elif defined(__aarch64__)
#define FLAGOS_SHIM_JUMP(name)                                  \
  "\tadrp x16, flagos_cudart_shim_to_" #name "\n"               \
  "\tldr x16, [x16, :lo12:flagos_cudart_shim_to_" #name "]\n"   \
  "\tbr x16\n"
#else
#error "the libcudart.so.12 shim has trampolines for x86_64 and aarch64 only"
#endif

#define FLAGOS_SHIM_TRAMPOLINE(name)                                          \
  __asm__(".text\n\t.p2align 4\n\t.globl " #name "\n\t.type " #name ",@function\n" \
          #name ":\n" FLAGOS_SHIM_JUMP(name) "\t.size " #name ", .-" #name "\n");
FLAGOS_CUDART_SHIM_STATUS(FLAGOS_SHIM_TRAMPOLINE)
FLAGOS_CUDART_SHIM_OTHER(FLAGOS_SHIM_TRAMPOLINE)

struct slot {
  const char* name;
  void** target;
  int required; /* an OTHER call: its absence is named at load */
};

#define FLAGOS_SHIM_ENTRY_STATUS(name) {#name, &flagos_cudart_shim_to_##name, 0},
#define FLAGOS_SHIM_ENTRY_OTHER(name) {#name, &flagos_cudart_shim_to_##name, 1},
static const struct slot kSlots[] = {FLAGOS_CUDART_SHIM_STATUS(FLAGOS_SHIM_ENTRY_STATUS)
                                         FLAGOS_CUDART_SHIM_OTHER(FLAGOS_SHIM_ENTRY_OTHER)};

static void* open_in(const char* var) {
  const char* root = getenv(var);
  char path[4096];
  if (root == NULL || *root == '\0') return NULL;
  if (snprintf(path, sizeof path, "%s/lib/" BRIDGE, root) >= (int)sizeof path) return NULL;
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void* open_bridge(void) {
  void* h = open_in("MACA_PATH");
  if (h == NULL) h = open_in("MACA_HOME");
  if (h == NULL) h = dlopen("/opt/maca/lib/" BRIDGE, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) h = dlopen(BRIDGE, RTLD_NOW | RTLD_LOCAL);
  return h;
}

__attribute__((constructor)) static void flagos_cudart_shim_load(void) {
  void* bridge = open_bridge();
  if (bridge == NULL) {
    fputs("[flagos] libcudart.so.12 shim: no " BRIDGE " found (searched $MACA_PATH/lib, $MACA_HOME/lib, "
          "/opt/maca/lib, the system library path); every CUDA call reports cudaErrorNotSupported\n",
          stderr);
    return;
  }
  char missing[1024] = "";
  for (size_t i = 0; i < sizeof kSlots / sizeof kSlots[0]; ++i) {
    void* fn = dlsym(bridge, kSlots[i].name);
    if (fn != NULL) {
      *kSlots[i].target = fn;
    } else if (kSlots[i].required && strlen(missing) + strlen(kSlots[i].name) + 3 < sizeof missing) {
      strcat(missing, missing[0] ? ", " : "");
      strcat(missing, kSlots[i].name);
    }
  }
  if (missing[0] != '\0')
    fprintf(stderr, "[flagos] libcudart.so.12 shim: " BRIDGE " has no %s; calling one stops the process\n",
            missing);
}
