/*
 * flagos/ext/diagnostics.h — FLAGOS_EXTENSION_DIAGNOSTICS (ABI 1.1): what a
 * plugin can say about itself beyond status codes, for people reading
 * `python -m torch_fl plugins` or `info`. Optional; a core that does not
 * know the type skips it.
 */
#ifndef FLAGOS_EXT_DIAGNOSTICS_H_
#define FLAGOS_EXT_DIAGNOSTICS_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_DIAGNOSTICS_EXT_VERSION 0u

typedef struct flagos_diagnostics_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_DIAGNOSTICS */
  /* Why device_count reports the count it does, in one line of UTF-8: ""
   * when devices were found, else e.g. "no libmusart.so found (searched
   * /usr/local/musa/lib, the system library path)". Never NULL, never fails.
   * Plugin-owned; valid for the process lifetime once device_count has been
   * called (before that it may count devices itself). Thread-safe. */
  const char* (*device_note)(void);
} flagos_diagnostics_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_DIAGNOSTICS_H_ */
