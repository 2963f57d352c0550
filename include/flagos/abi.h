/*
 * flagos/abi.h — versioning, status codes, handles and the struct-size rules of
 * the flagos plugin ABI. C99; compiles unchanged as C and C++.
 *
 * Compatibility rules (normative):
 *  - FLAGOS_ABI_MAJOR changes only for an incompatible change (a field moved,
 *    removed or retyped). The core refuses a plugin of another major.
 *  - FLAGOS_ABI_MINOR grows when members, status codes, capability bits or
 *    extension types are APPENDED. Nothing is ever reordered or removed within
 *    a major. Released layouts are frozen by include/flagos/abi_sizes.h.
 *  - Every table and every size-prefixed struct starts with `size_t
 *    struct_size`: the size the writer was compiled with. A reader touches a
 *    member only if FLAGOS_HAS_MEMBER says the struct is large enough for it,
 *    and calls a function pointer only if FLAGOS_HAS_FN says so (large enough
 *    AND non-NULL). Missing members read as zero / "unsupported".
 *  - Only fixed-width integers, pointers, size_t and double/float cross the
 *    boundary. Enums travel as int32_t. No C bool, no C++ types, and no C++
 *    exception may cross the boundary in either direction.
 *  - Strings are NUL-terminated UTF-8.
 */
#ifndef FLAGOS_ABI_H_
#define FLAGOS_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_ABI_MAJOR 1
#define FLAGOS_ABI_MINOR 7 /* 1.1: FLAGOS_EXTENSION_DIAGNOSTICS; 1.2: FLAGOS_EXTENSION_COLLECTIVES;
                            1.3: FLAGOS_EXTENSION_GRAPHS; 1.4: FLAGOS_EXTENSION_PROFILER;
                            1.5: FLAGOS_EXTENSION_IPC; 1.6: host services;
                            1.7: a native kernel's cache statistics */

/* The oldest plugin minor this header's core still loads (within the major). */
#define FLAGOS_ABI_MIN_SUPPORTED_MINOR 0

/* Marks the single symbol a plugin exports. Plugins build with
 * -fvisibility=hidden so nothing else leaks out. */
#if defined(_WIN32)
#define FLAGOS_EXPORT __declspec(dllexport)
#else
#define FLAGOS_EXPORT __attribute__((visibility("default")))
#endif

/* Size of `type` up to and including `member`: how large a struct must be for
 * `member` to be present. */
#define FLAGOS_STRUCT_SIZE(type, member) \
  (offsetof(type, member) + sizeof(((type*)0)->member))

/* True when the size-prefixed struct at `ptr` is large enough to hold `member`. */
#define FLAGOS_HAS_MEMBER(type, ptr, member) \
  ((ptr)->struct_size >= FLAGOS_STRUCT_SIZE(type, member))

/* True when `fn` may be called: the table holds it and it is non-NULL. */
#define FLAGOS_HAS_FN(type, ptr, fn) \
  (FLAGOS_HAS_MEMBER(type, ptr, fn) && (ptr)->fn != NULL)

/* C99-compatible compile-time assertion (no _Static_assert before C11). */
#define FLAGOS_ABI_CONCAT_(a, b) a##b
#define FLAGOS_ABI_CONCAT(a, b) FLAGOS_ABI_CONCAT_(a, b)
#define FLAGOS_ABI_ASSERT(cond, tag) \
  typedef char FLAGOS_ABI_CONCAT(flagos_abi_assert_, tag)[(cond) ? 1 : -1]

/* ------------------------------------------------------------------------ */
/* Status codes. Append-only. A core that meets a code it does not know treats
 * it as FLAGOS_ERROR_UNKNOWN. Ranges: 0-99 non-errors, 100s argument errors,
 * 200s memory errors, 300s capability/lifecycle errors, 400s device failures,
 * 500s communication failures (1.2), 900s internal. */
typedef int32_t flagos_status_t;

#define FLAGOS_SUCCESS 0
/* Not an error: a query found work still pending (stream_query, event_query). */
#define FLAGOS_NOT_READY 1

#define FLAGOS_ERROR_INVALID_ARGUMENT 100 /* NULL out-pointer, bad enum, bad size */
#define FLAGOS_ERROR_INVALID_DEVICE 101   /* ordinal outside [0, device_count) */
#define FLAGOS_ERROR_INVALID_HANDLE 102   /* stream/event/pointer not from this plugin */

/* Recoverable: the device stays usable; the core frees caches and retries. */
#define FLAGOS_ERROR_OUT_OF_MEMORY 200
#define FLAGOS_ERROR_OUT_OF_HOST_MEMORY 201

#define FLAGOS_ERROR_UNSUPPORTED 300      /* never fatal: the core falls back or reports */
#define FLAGOS_ERROR_INCOMPATIBLE_ABI 301 /* handshake: the plugin cannot serve this host */
#define FLAGOS_ERROR_NOT_INITIALIZED 302
#define FLAGOS_ERROR_RUNTIME_UNAVAILABLE 303 /* vendor runtime/driver missing or unusable */
#define FLAGOS_ERROR_INVALID_STATE 304       /* e.g. use after fork, timing before completion */
/* 1.3 (flagos/ext/graphs.h): not permitted while a stream captures; the
 * call invalidated the capture (or capture_end reports that one did). */
#define FLAGOS_ERROR_STREAM_CAPTURE 305

#define FLAGOS_ERROR_DEVICE 400      /* a device-side failure */
#define FLAGOS_ERROR_DEVICE_LOST 401 /* sticky: every later call on the device fails */

/* 1.2 (flagos/ext/collectives.h): sticky for the communicator, not the device. */
#define FLAGOS_ERROR_COMM 500    /* a peer failed or left, or the communicator was aborted */
#define FLAGOS_ERROR_TIMEOUT 501 /* the peers did not all arrive in time */

#define FLAGOS_ERROR_INTERNAL 900
#define FLAGOS_ERROR_UNKNOWN 999 /* the core's name for codes newer than itself */

/* Human-readable name of a status code. Static storage; never NULL. */
static inline const char* flagos_status_name(flagos_status_t s) {
  switch (s) {
    case FLAGOS_SUCCESS: return "SUCCESS";
    case FLAGOS_NOT_READY: return "NOT_READY";
    case FLAGOS_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case FLAGOS_ERROR_INVALID_DEVICE: return "INVALID_DEVICE";
    case FLAGOS_ERROR_INVALID_HANDLE: return "INVALID_HANDLE";
    case FLAGOS_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case FLAGOS_ERROR_OUT_OF_HOST_MEMORY: return "OUT_OF_HOST_MEMORY";
    case FLAGOS_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case FLAGOS_ERROR_INCOMPATIBLE_ABI: return "INCOMPATIBLE_ABI";
    case FLAGOS_ERROR_NOT_INITIALIZED: return "NOT_INITIALIZED";
    case FLAGOS_ERROR_RUNTIME_UNAVAILABLE: return "RUNTIME_UNAVAILABLE";
    case FLAGOS_ERROR_INVALID_STATE: return "INVALID_STATE";
    case FLAGOS_ERROR_STREAM_CAPTURE: return "STREAM_CAPTURE";
    case FLAGOS_ERROR_DEVICE: return "DEVICE";
    case FLAGOS_ERROR_DEVICE_LOST: return "DEVICE_LOST";
    case FLAGOS_ERROR_COMM: return "COMM";
    case FLAGOS_ERROR_TIMEOUT: return "TIMEOUT";
    case FLAGOS_ERROR_INTERNAL: return "INTERNAL";
    default: return "UNKNOWN";
  }
}

/* ------------------------------------------------------------------------ */
/* Handles. Opaque, plugin-owned. */

/* A device ordinal in [0, device_count). */
typedef int32_t flagos_device_t;

/* A stream: an in-order queue of work on one device. Created by stream_create
 * (destroyed by stream_destroy) or returned by get_default_stream (process
 * lifetime, never destroyed). Never NULL for a valid stream. */
typedef struct flagos_stream_s* flagos_stream_t;

/* A marker in a stream's work. Created by event_create, destroyed by
 * event_destroy. */
typedef struct flagos_event_s* flagos_event_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_ABI_H_ */
