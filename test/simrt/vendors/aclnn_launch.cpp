// aclnnXxx: the launch rules, then the computation enqueued in stream order
// as a host function working on a copy of everything it needs (shapes,
// strides, offsets, the addresses current at the launch, alpha, workspace),
// so destroying the executor or changing its addresses afterwards does not
// touch work already enqueued.
#include <cinttypes>

#include "../engine/api.h"
#include "aclnn_kernels.h"
#include "aclnn_ops.h"
#include "aclnn_status.h"

namespace simrt_aclnn {
namespace {

// A tensor's bytes as the launch captured them: [start, start + bytes).
struct Range {
  const char* name;
  const char* start = nullptr;
  size_t bytes = 0;  // 0: an empty view, nothing to read or write
  View view;         // rw filled in by the host function
};

struct Job {
  Op op;
  int dtype;
  std::vector<Range> in, out;
  Scalars scalars;
  void* workspace;
  uint64_t workspace_bytes;  // what the accumulator uses (mm), else 0
};

// The storage an operand's view touches, at its current address; false: the
// extent overflows (aclCreateTensor bounded it, so never in practice).
bool range_of(const Operand& o, size_t es, Range* r) {
  r->name = o.name;
  r->view.dims = o.dims;
  r->view.strides = o.strides;
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  if (!extent(o.dims, o.strides, o.offset, &lo, &hi, &overflow)) return !overflow;
  r->start = static_cast<const char*>(o.data) + lo * static_cast<int64_t>(es);
  r->bytes = static_cast<size_t>(hi - lo + 1) * es;
  r->view.first = o.offset - lo;
  return true;
}

// CANN docs, "aclnn API two-phase interface": every tensor's data (storage
// base + offset + the extent its strides give) must be device memory of the
// device the executor was prepared on, live when the work runs.
int check_range(const char* sym, const Range& r, int device) {
  if (r.bytes == 0 || simrt::pointer_device(kAclnn, r.start, r.bytes) == device) return kAclnnSuccess;
  return fail(sym, kAclnnParamInvalid,
              "%s's data [%p, +%zu bytes) is not inside one live device allocation of device %d "
              "(freed, out of bounds, host memory or another device's)",
              r.name, static_cast<const void*>(r.start), r.bytes, device);
}

// The host function: the memory is checked again (freed since the launch?),
// at the engine's read/write address (never the device address itself).
void run(void* p) {
  std::unique_ptr<Job> job(static_cast<Job*>(p));
  const char* sym = launch_symbol(job->op);
  for (auto* list : {&job->in, &job->out}) {
    for (Range& r : *list) {
      if (r.bytes == 0) continue;
      r.view.rw = simrt::device_rw(kAclnn, r.start, r.bytes);
      if (r.view.rw == nullptr)
        return simrt::stream_rule_violation(kAclnn, sym,
                                            "a tensor's device memory was freed before the enqueued operator "
                                            "ran (use after free); nothing was computed");
    }
  }
  char* ws = nullptr;
  if (job->workspace_bytes > 0 && (ws = simrt::device_rw(kAclnn, job->workspace, job->workspace_bytes)) == nullptr)
    return simrt::stream_rule_violation(kAclnn, sym,
                                        "the workspace was freed before the enqueued operator ran (use after free); "
                                        "nothing was computed");
  for (const Range& r : job->out)
    if (r.bytes == 0) return;  // an empty out: nothing to write
  std::vector<View> in;
  for (const Range& r : job->in) in.push_back(r.view);
  compute(job->op, job->dtype, in, job->out[0].view, job->scalars, ws);
}

}  // namespace

int launch(Op op, void* workspace, uint64_t workspace_size, aclOpExecutor* executor, void* stream) {
  const char* sym = launch_symbol(op);
  int st = 0;
  if (refused(sym, &st)) return st;
  if (executor == nullptr) return fail(sym, kAclnnParamNullptr, "executor is NULL");
  std::unique_lock<std::mutex> lock = lock_executors();
  Executor* e = find_executor(executor);
  // aclSetAclOpExecutorRepeatable's doc: an executor is single-use unless
  // marked repeatable; its launch frees it, so a second launch uses freed memory.
  if (e == nullptr && executor_issued(executor))
    return fail(sym, kAclnnParamInvalid,
                "executor %p is no longer live: it was launched once and not marked repeatable (a launch frees a "
                "single-use executor; aclSetAclOpExecutorRepeatable makes one reusable), or it was destroyed",
                static_cast<void*>(executor));
  if (e == nullptr)
    return fail(sym, kAclnnParamInvalid, "executor %p is not an aclOpExecutor", static_cast<void*>(executor));
  // Two-phase interface: aclnnXxx runs the executor aclnnXxxGetWorkspaceSize made.
  if (e->op != op)
    return fail(sym, kAclnnParamInvalid, "executor %p was prepared by %s, not %s", static_cast<void*>(executor),
                prepare_symbol(e->op), prepare_symbol(op));
  // Two-phase interface: the workspace is at least the size the first phase returned.
  if (workspace_size < e->workspace)
    return fail(sym, kAclnnParamInvalid, "workspaceSize %" PRIu64 " is less than the %" PRIu64 " bytes %s returned",
                workspace_size, e->workspace, prepare_symbol(op));
  const int sd = simrt::stream_device(kAclnn, stream);  // -1: not a live stream (the enqueue reports it)
  if (sd >= 0 && sd != e->device)
    return fail(sym, kAclnnParamInvalid,
                "the stream is on device %d, but the executor was prepared on device %d (its tensors' device)", sd,
                e->device);
  // Two-phase interface: the workspace is device memory of the stream's device.
  if (workspace == nullptr && e->workspace > 0)
    return fail(sym, kAclnnParamInvalid, "workspace is NULL, but %" PRIu64 " bytes are needed", e->workspace);
  if (workspace != nullptr && simrt::pointer_device(kAclnn, workspace, workspace_size) != e->device)
    return fail(sym, kAclnnParamInvalid,
                "workspace [%p, +%" PRIu64 " bytes) is not inside one live device allocation of device %d",
                workspace, workspace_size, e->device);
  auto job = std::make_unique<Job>();
  job->op = op;
  job->dtype = e->dtype;
  job->scalars = Scalars{e->alpha_f, e->alpha_i};
  job->workspace = workspace;
  job->workspace_bytes = op == Op::Mm ? e->workspace : 0;
  const size_t es = dtype_size(e->dtype);
  for (auto lists : {std::make_pair(&e->in, &job->in), std::make_pair(&e->out, &job->out)}) {
    for (const Operand& o : *lists.first) {
      Range r;
      if (!range_of(o, es, &r))
        return fail(sym, kAclnnParamInvalid, "%s's extent overflows the address space", o.name);
      // Addresses are checked at the launch: aclSet*TensorAddr may have replaced them.
      if ((st = check_range(sym, r, e->device)) != 0) return st;
      lists.second->push_back(std::move(r));
    }
  }
  st = done(simrt::launch_host_func(kAclnn, stream_symbol(op), stream, &run, job.get()));
  if (st != kAclnnSuccess) return st;
  job.release();  // the host function owns it now
  if (!e->repeatable) take_executor(executor);  // single-use: freed by its launch
  return kAclnnSuccess;
}

}  // namespace simrt_aclnn
