// The operators' arithmetic on host-visible memory: what a launch's host
// function runs once it has resolved every tensor to the engine's read/write
// address (engine/api.h device_rw). No checks here: the launch made them.
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn_objects.h"

namespace simrt_aclnn {

// A tensor view as the kernel reads it.
struct View {
  char* rw = nullptr;  // the lowest element the view touches, at its read/write address
  int64_t first = 0;   // elements from there to element [0, ..., 0]
  std::vector<int64_t> dims, strides;  // strides in elements, any sign
};

struct Scalars {
  double alpha_f = 1.0;
  int64_t alpha_i = 1;
};

// Elementwise ops (in: self[, other]) broadcast each input to out's shape.
// Mm (in: self [n,k], mat2 [k,m]) accumulates into `workspace` (n*m floats,
// row-major) and then copies it to out.
void compute(Op op, int dtype, const std::vector<View>& in, const View& out, const Scalars& s, char* workspace);

}  // namespace simrt_aclnn
