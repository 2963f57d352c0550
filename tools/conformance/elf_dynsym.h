// elf_dynsym.h — reads what a shared library exports, straight from its ELF
// file (no nm, no binutils on the vendor's machine required).
#pragma once

#include <string>
#include <vector>

namespace conformance {

struct ElfSymbol {
  std::string name;
  int bind = 0;  // STB_*
  int type = 0;  // STT_*
};

struct ElfInfo {
  std::string error;                  // non-empty when the file could not be read
  std::vector<ElfSymbol> exported;    // defined GLOBAL/WEAK/UNIQUE code or data
  std::vector<std::string> version_defs;  // names from .gnu.version_d
  bool has_gnu_stack = false;         // PT_GNU_STACK present
  bool exec_stack = false;            // ... and asks for an executable stack
  bool textrel = false;               // DT_TEXTREL or DF_TEXTREL
};

// Parses the ELF file at `path` (32- or 64-bit, host byte order).
ElfInfo read_elf_exports(const std::string& path);

const char* elf_type_name(int stt);

}  // namespace conformance
