// One communicator of the active plugin's collectives extension
// (include/flagos/ext/collectives.h), owned: created for one group, destroyed
// with it. Every operation is enqueued on a plugin stream; errors from the
// calls themselves throw flagos::Error with the plugin's message.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

#include "error.h"
#include "flagos/flagos.h"

namespace flagos::distributed {

// The plugin has the extension but not its communicator library
// (collectives.h: RUNTIME_UNAVAILABLE from comm_id_create). Thrown on every
// rank, so that all of them serve the group on the gloo tiers instead.
class CommUnavailable : public Error {
 public:
  using Error::Error;
};

class Communicator {
 public:
  // The active plugin's extension, or null when it has none (or too small).
  static const flagos_collectives_ext_t* extension();

  // Joins the group's communicator as `rank` of `size` on `device`: rank 0
  // makes the id and publishes it in `store` under `key`, the others read it
  // there; then every rank blocks in comm_create until all joined or
  // `timeout` passed (a flagos::Error naming the plugin's reason). Throws
  // CommUnavailable on every rank when rank 0's plugin lacks its library, or
  // when the library refuses these ranks (comm_create: UNSUPPORTED).
  Communicator(c10d::Store& store, const std::string& key, int rank, int size, int32_t device,
               std::chrono::milliseconds timeout);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const flagos_collectives_ext_t& ext() const { return *ext_; }
  flagos_comm_t handle() const { return comm_; }
  int32_t device() const { return device_; }
  // Throws the plugin's error when `status` is one, naming `call`.
  void check(flagos_status_t status, const char* call) const;
  // Fails pending and later operations (all ranks that can be told). Never blocks.
  void abort() noexcept;
  // "" while the communicator works, else why it does not.
  std::string error() const;

 private:
  const flagos_collectives_ext_t* ext_;
  flagos_comm_t comm_ = nullptr;
  int32_t device_;
};

}  // namespace flagos::distributed
