#include "distributed/gloo_tier_backend.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <numeric>

#include "distributed/bridged_work.h"

namespace flagos::distributed {
namespace {

std::vector<at::Tensor> flat(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> r;
  for (const auto& l : lists) r.insert(r.end(), l.begin(), l.end());
  return r;
}

// gloo has no AVG: SUM, then the bridge divides by the group size before the
// results go back. Returns the options gloo gets.
template <typename Options>
Options averaged(const Options& opts, HostBridge& bridge, const std::vector<at::Tensor>& written, int size) {
  if (opts.reduceOp != c10d::ReduceOp::AVG) return opts;
  for (const auto& t : written) {
    TORCH_CHECK(at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()),
                "[flagos] ReduceOp.AVG on a ", t.scalar_type(), " tensor: the flagos backend's gloo tiers "
                "average floating-point tensors only (use SUM and divide)");
  }
  Options summed = opts;
  summed.reduceOp = c10d::ReduceOp(c10d::ReduceOp::SUM);
  bridge.average_by(size);
  return summed;
}

}  // namespace

GlooTierBackend::GlooTierBackend(c10::intrusive_ptr<c10d::Backend> gloo, Bridge mode)
    : c10d::Backend(gloo->getRank(), gloo->getSize()), gloo_(std::move(gloo)), mode_(mode) {}

template <typename Issue>
c10::intrusive_ptr<c10d::Work> GlooTierBackend::run(c10d::OpType type, const std::shared_ptr<HostBridge>& bridge,
                                                    std::vector<at::Tensor> result, Issue&& issue) {
  bridge->order_after_current_streams();
  c10::intrusive_ptr<c10d::Work> inner = issue();
  return c10::make_intrusive<BridgedWork>(std::move(inner), bridge, std::move(result), getRank(), type);
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                          const c10d::BroadcastOptions& opts) {
  auto b = bridge();
  // The root only reads; the others only receive.
  auto host = opts.rootRank == getRank() ? b->in(tensors) : b->out(tensors);
  return run(c10d::OpType::BROADCAST, b, tensors, [&] { return gloo_->broadcast(host, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& opts) {
  auto b = bridge();
  auto host = b->inout(tensors);
  auto o = averaged(opts, *b, tensors, getSize());
  return run(c10d::OpType::ALLREDUCE, b, tensors, [&] { return gloo_->allreduce(host, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                    const c10d::AllreduceCoalescedOptions& opts) {
  auto b = bridge();
  auto host = b->inout(tensors);
  auto o = averaged(opts, *b, tensors, getSize());
  return run(c10d::OpType::ALLREDUCE_COALESCED, b, tensors, [&] { return gloo_->allreduce_coalesced(host, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::reduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::ReduceOptions& opts) {
  auto b = bridge();
  auto host = b->inout(tensors);
  auto o = averaged(opts, *b, tensors, getSize());
  return run(c10d::OpType::REDUCE, b, tensors, [&] { return gloo_->reduce(host, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllgatherOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  return run(c10d::OpType::ALLGATHER, b, flat(outputs), [&] { return gloo_->allgather(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                const c10d::AllgatherOptions& opts) {
  auto b = bridge();
  auto out = b->out(output);
  auto in = b->in(input);
  return run(c10d::OpType::_ALLGATHER_BASE, b, {output}, [&] { return gloo_->_allgather_base(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                    std::vector<at::Tensor>& inputs,
                                                                    const c10d::AllgatherOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  return run(c10d::OpType::ALLGATHER_COALESCED, b, flat(outputs),
             [&] { return gloo_->allgather_coalesced(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                std::vector<at::Tensor>& inputs,
                                                                                const c10d::AllgatherOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  return run(c10d::OpType::COALESCED, b, outputs,
             [&] { return gloo_->allgather_into_tensor_coalesced(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                       std::vector<at::Tensor>& inputs,
                                                       const c10d::GatherOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  return run(c10d::OpType::GATHER, b, flat(outputs), [&] { return gloo_->gather(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::scatter(std::vector<at::Tensor>& outputs,
                                                        std::vector<std::vector<at::Tensor>>& inputs,
                                                        const c10d::ScatterOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  return run(c10d::OpType::SCATTER, b, outputs, [&] { return gloo_->scatter(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                               std::vector<std::vector<at::Tensor>>& inputs,
                                                               const c10d::ReduceScatterOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  auto o = averaged(opts, *b, outputs, getSize());
  return run(c10d::OpType::REDUCE_SCATTER, b, outputs, [&] { return gloo_->reduce_scatter(out, in, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::ReduceScatterOptions& opts) {
  auto b = bridge();
  auto out = b->out(output);
  auto in = b->in(input);
  auto o = averaged(opts, *b, {output}, getSize());
  return run(c10d::OpType::_REDUCE_SCATTER_BASE, b, {output},
             [&] { return gloo_->_reduce_scatter_base(out, in, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  auto b = bridge();
  auto out = b->out(outputs);
  auto in = b->in(inputs);
  auto o = averaged(opts, *b, outputs, getSize());
  return run(c10d::OpType::COALESCED, b, outputs,
             [&] { return gloo_->reduce_scatter_tensor_coalesced(out, in, o); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                              std::vector<int64_t>& output_splits,
                                                              std::vector<int64_t>& input_splits,
                                                              const c10d::AllToAllOptions& opts) {
  auto b = bridge();
  auto out = b->out(output);
  auto in = b->in(input);
  return run(c10d::OpType::ALLTOALL_BASE, b, {output},
             [&] { return gloo_->alltoall_base(out, in, output_splits, input_splits, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::AllToAllOptions& opts) {
  // Not every torch release's gloo has the list form: one flat alltoall_base,
  // whose splits are the tensors' sizes, serves them all alike.
  const auto n = static_cast<size_t>(getSize());
  TORCH_CHECK(inputs.size() == n && outputs.size() == n, "[flagos] all_to_all: ", inputs.size(), " inputs and ",
              outputs.size(), " outputs in a group of ", n, " ranks; it takes one of each per rank");
  for (const auto& t : inputs)
    TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type() && (outputs.empty() ||
                t.scalar_type() == outputs[0].scalar_type()),
                "[flagos] all_to_all: every input and output tensor must have one dtype");
  auto b = bridge();
  std::vector<at::Tensor> flat_in;
  std::vector<int64_t> in_splits, out_splits;
  for (const auto& t : inputs) {
    flat_in.push_back(b->in(t).reshape(-1));
    in_splits.push_back(t.numel());
  }
  auto host_out = b->out(outputs);
  for (const auto& t : outputs) out_splits.push_back(t.numel());
  b->order_after_current_streams();  // cat reads the inputs now, before gloo runs
  auto send = at::cat(flat_in);
  auto recv = at::empty({std::accumulate(out_splits.begin(), out_splits.end(), int64_t{0})}, send.options());
  b->on_complete([host_out, recv, out_splits]() mutable {
    int64_t at = 0;
    for (size_t i = 0; i < host_out.size(); ++i) {
      host_out[i].copy_(recv.narrow(0, at, out_splits[i]).view(host_out[i].sizes()));
      at += out_splits[i];
    }
  });
  return run(c10d::OpType::ALLTOALL, b, outputs,
             [&] { return gloo_->alltoall_base(recv, send, out_splits, in_splits, opts); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  auto b = bridge();
  auto in = b->in(tensors);
  return run(c10d::OpType::SEND, b, tensors, [&] { return gloo_->send(in, dst, tag); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  auto b = bridge();
  auto out = b->out(tensors);
  return run(c10d::OpType::RECV, b, tensors, [&] { return gloo_->recv(out, src, tag); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  auto b = bridge();
  auto out = b->out(tensors);
  return run(c10d::OpType::RECVANYSOURCE, b, tensors, [&] { return gloo_->recvAnysource(out, tag); });
}

c10::intrusive_ptr<c10d::Work> GlooTierBackend::barrier(const c10d::BarrierOptions& opts) {
  return gloo_->barrier(opts);
}

void GlooTierBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  gloo_->monitoredBarrier(opts, wait_all_ranks);
}

}  // namespace flagos::distributed
