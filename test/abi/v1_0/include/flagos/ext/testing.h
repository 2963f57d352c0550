/*
 * flagos/ext/testing.h — FLAGOS_EXTENSION_TESTING: hooks for the conformance
 * runner, so that asynchronous behaviour can be tested the same way on every
 * vendor. Never used by the core in production paths.
 */
#ifndef FLAGOS_EXT_TESTING_H_
#define FLAGOS_EXT_TESTING_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_TESTING_EXT_VERSION 0u

typedef struct flagos_testing_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_TESTING */
  /* Enqueues a pause of `microseconds` on `stream`: later work on the stream
   * starts only after it, and stream_query/event_query report
   * FLAGOS_NOT_READY meanwhile. Thread-safe; never blocks the caller. */
  flagos_status_t (*stream_enqueue_delay)(flagos_stream_t stream, uint64_t microseconds);
} flagos_testing_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_TESTING_H_ */
