// The host plugin's reference kernels (FLAGOS_EXTENSION_KERNELS): one run()
// per ATen out= overload. Each validates its call (kernel_call.h), answers
// UNSUPPORTED before writing anything for inputs it does not handle, and
// enqueues the work on the call's stream.
#pragma once

#include "flagos/ext/kernels.h"

namespace flagos_host {

// kernels_elementwise.cpp
flagos_status_t run_add_out(const flagos_kernel_call_t* call);
flagos_status_t run_mul_out(const flagos_kernel_call_t* call);
flagos_status_t run_relu_out(const flagos_kernel_call_t* call);
flagos_status_t run_neg_out(const flagos_kernel_call_t* call);
flagos_status_t run_abs_out(const flagos_kernel_call_t* call);
flagos_status_t run_fill_scalar_out(const flagos_kernel_call_t* call);
flagos_status_t run_copy_out(const flagos_kernel_call_t* call);

// kernels_reduce.cpp
flagos_status_t run_sum_intlist_out(const flagos_kernel_call_t* call);

// kernels_mm.cpp
flagos_status_t run_mm_out(const flagos_kernel_call_t* call);

// kernels_ext.cpp: the extension table, the head of the chain; by default the
// graphs and collectives extensions follow it, then the testing extension.
const flagos_extension_t* kernels_extension();
// Sets what follows the kernels extension. Called only while the first
// successful handshake configures the plugin, before the table is returned.
void set_kernels_next(const flagos_extension_t* next);

}  // namespace flagos_host
