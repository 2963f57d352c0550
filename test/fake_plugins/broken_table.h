// A real vendor table with one deliberate defect, for the simulated runtimes'
// negative tests: a fixture defines BROKEN_TABLE_BASE (the vendor file) and
// break_table(), which renames the copy and changes one value.
#pragma once

#define vendor base_vendor  // the real table's accessor, renamed
#include BROKEN_TABLE_BASE
#undef vendor

namespace flagos_cudalike {

void break_table(Vendor& v);

const Vendor& vendor() {
  static const Vendor broken = [] {
    Vendor v = base_vendor();
    break_table(v);
    return v;
  }();
  return broken;
}

}  // namespace flagos_cudalike
