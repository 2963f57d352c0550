#include "distributed/communicator.h"

#include <cstring>

#include "device/runtime.h"

namespace flagos::distributed {

const flagos_collectives_ext_t* Communicator::extension() {
  const auto* ext = reinterpret_cast<const flagos_collectives_ext_t*>(
      device::active_plugin().find_extension(FLAGOS_EXTENSION_COLLECTIVES));
  if (!ext || ext->base.struct_size < FLAGOS_COLLECTIVES_EXT_SIZE_1_2) return nullptr;
  return ext;
}

Communicator::Communicator(c10d::Store& store, const std::string& key, int rank, int size, int32_t device,
                           std::chrono::milliseconds timeout)
    : ext_(extension()), device_(device) {
  if (!ext_) throw Error("the active plugin has no collectives extension");
  flagos_comm_id_t id{};
  if (rank == 0) {
    const flagos_status_t st = ext_->comm_id_create(&id);
    if (st == FLAGOS_ERROR_RUNTIME_UNAVAILABLE) {
      // The other ranks wait for the id: an empty one sends them to gloo too.
      const char* message = device::active_plugin().api().last_error_message();
      const std::string why = message && *message ? message : "the communicator library is unavailable";
      store.set(key + "/unavailable", std::vector<uint8_t>(why.begin(), why.end()));
      store.set(key, std::vector<uint8_t>());
      throw CommUnavailable(why);
    }
    check(st, "comm_id_create");
    store.set(key, std::vector<uint8_t>(id.bytes, id.bytes + sizeof id.bytes));
  } else {
    const std::vector<uint8_t> got = store.get(key);  // waits up to the store's timeout
    if (got.empty()) {
      const std::vector<uint8_t> why = store.get(key + "/unavailable");
      throw CommUnavailable(std::string(why.begin(), why.end()));
    }
    if (got.size() != sizeof id.bytes)
      throw Error("communicator id in the store has " + std::to_string(got.size()) + " bytes, expected " +
                  std::to_string(sizeof id.bytes));
    std::memcpy(id.bytes, got.data(), sizeof id.bytes);
  }
  const flagos_status_t st = ext_->comm_create(&id, size, rank, device, static_cast<uint64_t>(timeout.count()), &comm_);
  // The library refusing these ranks (collectives.h) does so on every rank alike.
  if (st == FLAGOS_ERROR_UNSUPPORTED) throw CommUnavailable(device::active_plugin().api().last_error_message());
  check(st, "comm_create");
}

Communicator::~Communicator() {
  if (comm_) ext_->comm_destroy(comm_);  // never blocks on a peer; nothing to report in a destructor
}

void Communicator::check(flagos_status_t status, const char* call) const {
  device::active_plugin().check(status, call);
}

void Communicator::abort() noexcept { ext_->comm_abort(comm_); }

std::string Communicator::error() const {
  const flagos_status_t st = ext_->comm_status(comm_);
  if (st == FLAGOS_SUCCESS) return {};
  const char* message = device::active_plugin().api().last_error_message();
  return std::string(flagos_status_name(st)) + (message && *message ? std::string(": ") + message : "");
}

}  // namespace flagos::distributed
