// flagos/kit/entry.hpp — the plugin table and the one exported symbol,
// generated from a plugin's implementation struct.
//
//   struct MyPlugin {
//     static constexpr const char* kName = "myvendor";
//     static constexpr const char* kVersion = "0.1.0";
//     static const flagos_extension_t* extensions();         // chain or nullptr
//     static flagos_status_t configure(const char* fn, const flagos_host_info_t* host);
//     FLAGOS_KIT_MEMBER(last_error_message)                  // one static function
//     FLAGOS_KIT_MEMBER(device_count)                        // per table member,
//     ...                                                    // named as the member
//   };
//   FLAGOS_KIT_PLUGIN_ENTRY(MyPlugin)
//   flagos_status_t MyPlugin::device_count(int32_t* count) { ... }
//
// A [required] member the struct lacks fails the build; an [optional] one it
// lacks is NULL in the table. A member with the wrong signature fails the
// build too, since each is assigned to the ABI's own pointer type.
//
// The entry follows plugin_api.h: it stores the table in *api before any
// other check (so the core can read last_error_message on failure), refuses
// another ABI major, keeps the core's services (host_services.hpp), then
// calls configure() under the kit's lock. configure
// sees every call: it fixes the options on the first successful one and
// answers later ones (INVALID_STATE when they differ); it must not touch
// the vendor runtime or a device, nor start threads.
#pragma once

#include <cstddef>
#include <mutex>
#include <type_traits>

#include "flagos/kit/guarded.hpp"
#include "flagos/kit/host_services.hpp"
#include "flagos/plugin_api.h"

// Declares the static member function `member` with the exact type of the
// table's member of that name, so that the signature is the ABI's by
// construction (define it as usual: flagos_status_t P::member(...) {...}).
#define FLAGOS_KIT_MEMBER(member) \
  static std::remove_pointer_t<decltype(flagos_plugin_api_t::member)> member;

namespace flagos::kit {
namespace detail {

#define FLAGOS_KIT_COUNT_MEMBER(member, required) +1
inline constexpr size_t kFunctionCount = 0 FLAGOS_PLUGIN_API_1_0_FUNCTIONS(FLAGOS_KIT_COUNT_MEMBER);
#undef FLAGOS_KIT_COUNT_MEMBER
static_assert(offsetof(flagos_plugin_api_t, last_error_message) + kFunctionCount * sizeof(void (*)()) ==
                  sizeof(flagos_plugin_api_t),
              "FLAGOS_PLUGIN_API_1_0_FUNCTIONS must list every function member of the table");

// has_<member><Impl>::value: whether Impl defines a static function `member`.
#define FLAGOS_KIT_DETECT(member, required)                                                   \
  template <class T, class = void>                                                           \
  struct has_##member : std::false_type {};                                                  \
  template <class T>                                                                         \
  struct has_##member<T, std::void_t<decltype(&T::member)>> : std::true_type {};
FLAGOS_PLUGIN_API_1_0_FUNCTIONS(FLAGOS_KIT_DETECT)
#undef FLAGOS_KIT_DETECT

// False, but only once Impl is known: a static_assert on it in a discarded
// `if constexpr` branch fires only when that branch is taken.
template <class>
inline constexpr bool kNever = false;

template <class Impl>
flagos_plugin_api_t make_table() {
  flagos_plugin_api_t t{};
  t.struct_size = sizeof t;
  t.abi_major = FLAGOS_ABI_MAJOR;
  t.abi_minor = FLAGOS_ABI_MINOR;
  t.name = Impl::kName;
  t.version = Impl::kVersion;
  t.extensions = Impl::extensions();
#define FLAGOS_KIT_FILL(member, required)                                                    \
  if constexpr (has_##member<Impl>::value) {                                                 \
    t.member = &Impl::member;                                                                \
  } else {                                                                                   \
    static_assert(!(required) || kNever<Impl>, "the plugin lacks the [required] member " #member);           \
  }
  FLAGOS_PLUGIN_API_1_0_FUNCTIONS(FLAGOS_KIT_FILL)
#undef FLAGOS_KIT_FILL
  return t;
}

}  // namespace detail

// The plugin's static table (process lifetime, never modified).
template <class Impl>
const flagos_plugin_api_t* table() {
  static const flagos_plugin_api_t t = detail::make_table<Impl>();
  return &t;
}

// The body of flagos_plugin_get_api (see the header comment).
template <class Impl>
flagos_status_t entry(const flagos_host_info_t* host, const flagos_plugin_api_t** api) noexcept {
  static const char* fn = "flagos_plugin_get_api";
  return guarded(fn, [&]() -> flagos_status_t {
    if (api == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: api is NULL", fn);
    *api = table<Impl>();
    if (host == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host is NULL", fn);
    if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, abi_major))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host->struct_size %zu is too small", fn,
                  host->struct_size);
    if (host->abi_major != FLAGOS_ABI_MAJOR)
      return fail(FLAGOS_ERROR_INCOMPATIBLE_ABI, "%s: the core speaks plugin ABI %u, this plugin %d",
                  fn, host->abi_major, FLAGOS_ABI_MAJOR);
    static std::mutex lock;
    std::lock_guard<std::mutex> hold(lock);
    keep_host_services(host);
    return Impl::configure(fn, host);
  });
}

}  // namespace flagos::kit

// Defines the exported entry symbol for `Impl` (use once, at global scope).
#define FLAGOS_KIT_PLUGIN_ENTRY(Impl)                                                       \
  extern "C" FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api(                           \
      const flagos_host_info_t* host, const flagos_plugin_api_t** api) {                    \
    return ::flagos::kit::entry<Impl>(host, api);                                           \
  }
