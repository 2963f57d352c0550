// SIMRT_FAIL=<symbol>[:<nth>[:<code>]][,...]: the nth call (1-based) of an
// exported symbol fails before it does anything, so error paths of the code
// under test run without any real fault.
#pragma once

namespace simrt {

// Counts this call of `symbol`. True when it must fail; *code is the code
// from the spec, or -1 when the spec named none (the caller picks a default).
bool fault_injected(const char* symbol, int* code);

}  // namespace simrt
