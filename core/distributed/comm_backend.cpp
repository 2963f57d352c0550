#include "distributed/comm_backend.h"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "device/streams.h"
#include "diag/log.h"
#include "distributed/comm_work.h"
#include "error.h"
#include "routes/native_args.h"

namespace flagos::distributed {
namespace {

constexpr auto kFlagos = c10::DeviceType::PrivateUse1;

flagos_dtype_t dtype_of(const at::Tensor& t) {
  flagos_dtype_t d{};
  routes::to_flagos_dtype(t.scalar_type(), &d);
  return d;
}

bool plugin_op(const c10d::ReduceOp& op, int32_t* out) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: *out = FLAGOS_REDUCE_SUM; return true;
    case c10d::ReduceOp::PRODUCT: *out = FLAGOS_REDUCE_PROD; return true;
    case c10d::ReduceOp::MIN: *out = FLAGOS_REDUCE_MIN; return true;
    case c10d::ReduceOp::MAX: *out = FLAGOS_REDUCE_MAX; return true;
    case c10d::ReduceOp::AVG: *out = FLAGOS_REDUCE_AVG; return true;
    default: return false;  // PREMUL_SUM, bitwise ops: the fallback's
  }
}

char* bytes(const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); }

}  // namespace

CommBackend::CommBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout, c10::intrusive_ptr<GlooTierBackend> fallback,
                         int32_t device)
    : c10d::Backend(rank, size),
      fallback_(std::move(fallback)),
      stream_(device::pool_stream(static_cast<c10::DeviceIndex>(device), /*high_priority=*/true)),
      timeout_(timeout) {
  comm_ = std::make_shared<Communicator>(*store, "flagos_comm_id", rank, size, device, timeout);
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

CommBackend::~CommBackend() {
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

bool CommBackend::serves(const std::vector<at::Tensor>& tensors) const {
  if (tensors.empty()) return false;
  for (const auto& t : tensors) {
    flagos_dtype_t d{};
    if (!t.defined() || t.device().type() != kFlagos || t.device().index() != comm_->device() ||
        !t.is_contiguous() || !routes::to_flagos_dtype(t.scalar_type(), &d) || !comm_->ext().supports_dtype(d))
      return false;
  }
  return true;
}

bool CommBackend::serves_op(const c10d::ReduceOp& op, const std::vector<at::Tensor>& tensors) const {
  int32_t code = 0;
  if (!serves(tensors) || !plugin_op(op, &code)) return false;
  const uint32_t ops = comm_->ext().reduce_ops;
  if (code != FLAGOS_REDUCE_AVG) return (ops & (1u << code)) != 0;
  for (const auto& t : tensors)
    if (!at::isFloatingType(t.scalar_type())) return false;
  return (ops & (1u << FLAGOS_REDUCE_AVG)) || (ops & (1u << FLAGOS_REDUCE_SUM));
}

c10::intrusive_ptr<c10d::Work> CommBackend::enqueue(c10d::OpType type, const char* name,
                                                    const std::vector<at::Tensor>& used,
                                                    std::vector<at::Tensor> outputs,
                                                    const std::function<void(flagos_stream_t)>& issue,
                                                    bool blocking) {
  const std::string broken = comm_->error();
  if (!broken.empty())
    throw Error(std::string("distributed: ") + name + " on a group whose communicator failed earlier (" + broken +
                "); destroy the group and make a new one");
  const auto index = static_cast<c10::DeviceIndex>(comm_->device());
  c10::Event ready(kFlagos);
  ready.record(device::current_stream(index));
  ready.block(stream_);
  {
    c10::StreamGuard guard(stream_);  // copies and allocations of `issue` land on the communicator's stream
    issue(device::native(stream_));
  }
  c10::impl::VirtualGuardImpl impl(kFlagos);
  for (const auto& t : used)
    if (t.defined() && t.device().type() == kFlagos) impl.recordDataPtrOnStream(t.storage().data_ptr(), stream_);
  auto done = std::make_shared<c10::Event>(kFlagos);
  done->record(stream_);
  auto future = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors(),
                                                          std::vector<c10::Device>{c10::Device(kFlagos, index)});
  {
    c10::StreamGuard guard(stream_);  // the future's event follows the collective
    future->markCompleted(c10::IValue(outputs));
  }
  watch(done, name);
  return c10::make_intrusive<CommWork>(comm_, done, future, std::move(outputs), getRank(), type, blocking);
}

void CommBackend::grouped(const std::function<void()>& calls) const {
  comm_->check(comm_->ext().group_start(), "group_start");
  try {
    calls();
  } catch (...) {
    comm_->ext().group_end();
    throw;
  }
  comm_->check(comm_->ext().group_end(), "group_end");
}

// ---- collectives --------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> CommBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::AllreduceOptions& opts) {
  if (!serves_op(opts.reduceOp, tensors)) return fallback_->allreduce(tensors, opts);
  int32_t op = 0;
  plugin_op(opts.reduceOp, &op);
  const bool divide = op == FLAGOS_REDUCE_AVG && !(comm_->ext().reduce_ops & (1u << FLAGOS_REDUCE_AVG));
  if (divide) op = FLAGOS_REDUCE_SUM;
  return enqueue(c10d::OpType::ALLREDUCE, "all_reduce", tensors, tensors, [&](flagos_stream_t s) {
    for (auto& t : tensors) {
      comm_->check(comm_->ext().all_reduce(t.data_ptr(), t.data_ptr(), t.numel(), dtype_of(t), op,
                                           comm_->handle(), s), "all_reduce");
      if (divide) t.div_(getSize());
    }
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                const c10d::AllreduceCoalescedOptions& opts) {
  c10d::AllreduceOptions each = opts;
  if (!serves_op(opts.reduceOp, tensors)) return fallback_->allreduce_coalesced(tensors, opts);
  return allreduce(tensors, each);
}

c10::intrusive_ptr<c10d::Work> CommBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                      const c10d::BroadcastOptions& opts) {
  if (!serves(tensors)) return fallback_->broadcast(tensors, opts);
  return enqueue(c10d::OpType::BROADCAST, "broadcast", tensors, tensors, [&](flagos_stream_t s) {
    for (auto& t : tensors)
      comm_->check(comm_->ext().broadcast(t.data_ptr(), t.data_ptr(), t.numel(), dtype_of(t),
                                          static_cast<int32_t>(opts.rootRank), comm_->handle(), s), "broadcast");
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  int32_t op = 0;
  if (!serves_op(opts.reduceOp, tensors) || !plugin_op(opts.reduceOp, &op) || op == FLAGOS_REDUCE_AVG)
    return fallback_->reduce(tensors, opts);
  return enqueue(c10d::OpType::REDUCE, "reduce", tensors, tensors, [&](flagos_stream_t s) {
    for (auto& t : tensors)
      comm_->check(comm_->ext().reduce(t.data_ptr(), t.data_ptr(), t.numel(), dtype_of(t), op,
                                       static_cast<int32_t>(opts.rootRank), comm_->handle(), s), "reduce");
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                            const c10d::AllgatherOptions& opts) {
  if (!serves({output, input}) || output.numel() != input.numel() * getSize())
    return fallback_->_allgather_base(output, input, opts);
  return enqueue(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", {output, input}, {output},
                 [&](flagos_stream_t s) {
                   comm_->check(comm_->ext().all_gather(input.data_ptr(), output.data_ptr(), input.numel(),
                                                        dtype_of(input), comm_->handle(), s), "all_gather");
                 });
}

c10::intrusive_ptr<c10d::Work> CommBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::AllgatherOptions& opts) {
  if (inputs.size() != 1 || outputs.size() != 1 || outputs[0].size() != static_cast<size_t>(getSize()))
    return fallback_->allgather(outputs, inputs, opts);
  std::vector<at::Tensor> all = outputs[0];
  all.push_back(inputs[0]);
  for (const auto& t : outputs[0])
    if (t.numel() != inputs[0].numel() || t.scalar_type() != inputs[0].scalar_type())
      return fallback_->allgather(outputs, inputs, opts);
  if (!serves(all)) return fallback_->allgather(outputs, inputs, opts);
  const at::Tensor& in = inputs[0];
  return enqueue(c10d::OpType::ALLGATHER, "all_gather", all, outputs[0], [&](flagos_stream_t s) {
    at::Tensor flat = at::empty({getSize() * in.numel()}, in.options());  // on the communicator's stream
    comm_->check(comm_->ext().all_gather(in.data_ptr(), flat.data_ptr(), in.numel(), dtype_of(in),
                                         comm_->handle(), s), "all_gather");
    for (int r = 0; r < getSize(); ++r)
      outputs[0][r].copy_(flat.narrow(0, r * in.numel(), in.numel()).view(outputs[0][r].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                std::vector<at::Tensor>& inputs,
                                                                const c10d::AllgatherOptions& opts) {
  return fallback_->allgather_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> CommBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                            std::vector<at::Tensor>& inputs,
                                                                            const c10d::AllgatherOptions& opts) {
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  bool sized = outputs.size() == inputs.size();
  for (size_t i = 0; sized && i < inputs.size(); ++i) sized = outputs[i].numel() == inputs[i].numel() * getSize();
  if (!sized || !serves(all)) return fallback_->allgather_into_tensor_coalesced(outputs, inputs, opts);
  return enqueue(c10d::OpType::COALESCED, "all_gather_into_tensor", all, outputs, [&](flagos_stream_t s) {
    for (size_t i = 0; i < inputs.size(); ++i)
      comm_->check(comm_->ext().all_gather(inputs[i].data_ptr(), outputs[i].data_ptr(), inputs[i].numel(),
                                           dtype_of(inputs[i]), comm_->handle(), s), "all_gather");
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::ReduceScatterOptions& opts) {
  int32_t op = 0;
  if (!serves_op(opts.reduceOp, {output, input}) || !plugin_op(opts.reduceOp, &op) ||
      input.numel() != output.numel() * getSize())
    return fallback_->_reduce_scatter_base(output, input, opts);
  const bool divide = op == FLAGOS_REDUCE_AVG && !(comm_->ext().reduce_ops & (1u << FLAGOS_REDUCE_AVG));
  if (divide) op = FLAGOS_REDUCE_SUM;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", {output, input}, {output},
                 [&](flagos_stream_t s) {
                   comm_->check(comm_->ext().reduce_scatter(input.data_ptr(), output.data_ptr(), output.numel(),
                                                            dtype_of(output), op, comm_->handle(), s),
                                "reduce_scatter");
                   if (divide) output.div_(getSize());
                 });
}

c10::intrusive_ptr<c10d::Work> CommBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ReduceScatterOptions& opts) {
  if (outputs.size() != 1 || inputs.size() != 1 || inputs[0].size() != static_cast<size_t>(getSize()))
    return fallback_->reduce_scatter(outputs, inputs, opts);
  for (const auto& t : inputs[0])
    if (t.numel() != outputs[0].numel()) return fallback_->reduce_scatter(outputs, inputs, opts);
  std::vector<at::Tensor> flat_inputs;
  for (const auto& t : inputs[0]) flat_inputs.push_back(t.reshape(-1));
  at::Tensor input;
  {
    c10::StreamGuard guard(device::current_stream(static_cast<c10::DeviceIndex>(comm_->device())));
    if (!serves(inputs[0])) return fallback_->reduce_scatter(outputs, inputs, opts);
    input = at::cat(flat_inputs);  // on the caller's stream, ordered before the collective
  }
  return _reduce_scatter_base(outputs[0], input, opts);
}

c10::intrusive_ptr<c10d::Work> CommBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                            std::vector<at::Tensor>& inputs,
                                                                            const c10d::ReduceScatterOptions& opts) {
  return fallback_->reduce_scatter_tensor_coalesced(outputs, inputs, opts);
}

// ---- point to point and their compositions -------------------------------------------

c10::intrusive_ptr<c10d::Work> CommBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                          std::vector<int64_t>& output_splits,
                                                          std::vector<int64_t>& input_splits,
                                                          const c10d::AllToAllOptions& opts) {
  if (!serves({output, input}) || output.dim() == 0 || input.dim() == 0)
    return fallback_->alltoall_base(output, input, output_splits, input_splits, opts);
  const int n = getSize();
  auto rows = [n](const at::Tensor& t, const std::vector<int64_t>& splits) {
    return splits.empty() ? std::vector<int64_t>(n, t.size(0) / n) : splits;
  };
  const auto out_rows = rows(output, output_splits), in_rows = rows(input, input_splits);
  const int64_t out_row = output.numel() / std::max<int64_t>(output.size(0), 1);
  const int64_t in_row = input.numel() / std::max<int64_t>(input.size(0), 1);
  return enqueue(c10d::OpType::ALLTOALL_BASE, "all_to_all_single", {output, input}, {output},
                 [&](flagos_stream_t s) {
                   const auto& x = comm_->ext();
                   const auto d = dtype_of(input);
                   grouped([&] {
                     int64_t in_at = 0, out_at = 0;
                     for (int r = 0; r < n; ++r) {
                       comm_->check(x.send(bytes(input) + in_at * in_row * input.element_size(),
                                           in_rows[r] * in_row, d, r, comm_->handle(), s), "send");
                       comm_->check(x.recv(bytes(output) + out_at * out_row * output.element_size(),
                                           out_rows[r] * out_row, d, r, comm_->handle(), s), "recv");
                       in_at += in_rows[r];
                       out_at += out_rows[r];
                     }
                   });
                 });
}

c10::intrusive_ptr<c10d::Work> CommBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllToAllOptions& opts) {
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  if (outputs.size() != static_cast<size_t>(getSize()) || inputs.size() != outputs.size() || !serves(all))
    return fallback_->alltoall(outputs, inputs, opts);
  return enqueue(c10d::OpType::ALLTOALL, "all_to_all", all, outputs, [&](flagos_stream_t s) {
    grouped([&] {
      for (int r = 0; r < getSize(); ++r) {
        comm_->check(comm_->ext().send(inputs[r].data_ptr(), inputs[r].numel(), dtype_of(inputs[r]), r,
                                       comm_->handle(), s), "send");
        comm_->check(comm_->ext().recv(outputs[r].data_ptr(), outputs[r].numel(), dtype_of(outputs[r]), r,
                                       comm_->handle(), s), "recv");
      }
    });
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                   std::vector<at::Tensor>& inputs,
                                                   const c10d::GatherOptions& opts) {
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> all = inputs;
  if (getRank() == root && !outputs.empty()) all.insert(all.end(), outputs[0].begin(), outputs[0].end());
  if (inputs.size() != 1 || (getRank() == root && (outputs.size() != 1 ||
                                                   outputs[0].size() != static_cast<size_t>(getSize()))) ||
      !serves(all))
    return fallback_->gather(outputs, inputs, opts);
  std::vector<at::Tensor> result = getRank() == root ? outputs[0] : std::vector<at::Tensor>{};
  return enqueue(c10d::OpType::GATHER, "gather", all, result, [&](flagos_stream_t s) {
    const at::Tensor& in = inputs[0];
    grouped([&] {
      if (getRank() != root) {
        comm_->check(comm_->ext().send(in.data_ptr(), in.numel(), dtype_of(in), root, comm_->handle(), s), "send");
        return;
      }
      for (int r = 0; r < getSize(); ++r) {
        at::Tensor& out = outputs[0][r];
        if (r == root)
          out.copy_(in);
        else
          comm_->check(comm_->ext().recv(out.data_ptr(), out.numel(), dtype_of(out), r, comm_->handle(), s), "recv");
      }
    });
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::scatter(std::vector<at::Tensor>& outputs,
                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                    const c10d::ScatterOptions& opts) {
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> all = outputs;
  if (getRank() == root && !inputs.empty()) all.insert(all.end(), inputs[0].begin(), inputs[0].end());
  if (outputs.size() != 1 || (getRank() == root && (inputs.size() != 1 ||
                                                    inputs[0].size() != static_cast<size_t>(getSize()))) ||
      !serves(all))
    return fallback_->scatter(outputs, inputs, opts);
  return enqueue(c10d::OpType::SCATTER, "scatter", all, outputs, [&](flagos_stream_t s) {
    at::Tensor& out = outputs[0];
    grouped([&] {
      if (getRank() != root) {
        comm_->check(comm_->ext().recv(out.data_ptr(), out.numel(), dtype_of(out), root, comm_->handle(), s), "recv");
        return;
      }
      for (int r = 0; r < getSize(); ++r) {
        const at::Tensor& in = inputs[0][r];
        if (r == root)
          out.copy_(in);
        else
          comm_->check(comm_->ext().send(in.data_ptr(), in.numel(), dtype_of(in), r, comm_->handle(), s), "send");
      }
    });
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  if (tensors.size() != 1 || !serves(tensors)) return fallback_->send(tensors, dst, tag);
  const at::Tensor& t = tensors[0];
  return enqueue(c10d::OpType::SEND, "send", tensors, tensors, [&](flagos_stream_t s) {
    comm_->check(comm_->ext().send(t.data_ptr(), t.numel(), dtype_of(t), dst, comm_->handle(), s), "send");
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  if (tensors.size() != 1 || !serves(tensors)) return fallback_->recv(tensors, src, tag);
  const at::Tensor& t = tensors[0];
  return enqueue(c10d::OpType::RECV, "recv", tensors, tensors, [&](flagos_stream_t s) {
    comm_->check(comm_->ext().recv(t.data_ptr(), t.numel(), dtype_of(t), src, comm_->handle(), s), "recv");
  });
}

c10::intrusive_ptr<c10d::Work> CommBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  return fallback_->recvAnysource(tensors, tag);  // a communicator pairs by peer
}

c10::intrusive_ptr<c10d::Work> CommBackend::barrier(const c10d::BarrierOptions& opts) {
  at::Tensor one;
  {
    c10::StreamGuard guard(stream_);
    one = at::zeros({1}, at::TensorOptions().dtype(at::kInt).device(kFlagos, comm_->device()));
  }
  return enqueue(c10d::OpType::BARRIER, "barrier", {one}, {}, [&](flagos_stream_t s) {
    comm_->check(comm_->ext().all_reduce(one.data_ptr(), one.data_ptr(), 1, dtype_of(one), FLAGOS_REDUCE_SUM,
                                         comm_->handle(), s), "all_reduce");
  }, /*blocking=*/true);
}

void CommBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  fallback_->monitoredBarrier(opts, wait_all_ranks);
}

// ---- lifetime and the watchdog -------------------------------------------------

void CommBackend::setTimeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  fallback_->setTimeout(timeout);
}

void CommBackend::abort() {
  comm_->abort();
  fallback_->abort();
}

void CommBackend::shutdown() { fallback_->shutdown(); }

void CommBackend::watch(const std::shared_ptr<c10::Event>& done, const char* name) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  pending_.push_back({done, std::chrono::steady_clock::now() + timeout_, name});
  watch_cv_.notify_all();
}

void CommBackend::watchdog_loop() {
  std::unique_lock<std::mutex> lock(watch_mu_);
  while (!stopping_) {
    watch_cv_.wait_for(lock, std::chrono::milliseconds(50));
    const auto now = std::chrono::steady_clock::now();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->done->query()) {
        it = pending_.erase(it);
      } else if (now > it->deadline) {
        diag::error(std::string("distributed: ") + it->name + " did not complete within " +
                    std::to_string(timeout_.count()) + " ms (the group's timeout); its communicator is aborted, "
                    "so this and every later collective of the group fails");
        comm_->abort();
        pending_.clear();
        break;
      } else {
        ++it;
      }
    }
  }
}

}  // namespace flagos::distributed
