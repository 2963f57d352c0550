// packaging: what the shared library itself must look like. Read from the
// file and from the dynamic loader; the entry is never called here.
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "elf_dynsym.h"
#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

ElfInfo read_elf(Ctx& c) {
  ElfInfo e = read_elf_exports(c.plugin.path());
  c.require(e.error.empty(), e.error);
  return e;
}

// Two vendor stacks in one process must not collide: the version script
// exports flagos_plugin_get_api and nothing else.
void one_exported_symbol(Ctx& c) {
  ElfInfo e = read_elf(c);
  std::string list;
  for (size_t i = 0; i < e.exported.size(); ++i) {
    if (i == 12) {
      list += strf(", ... (%zu more)", e.exported.size() - i);
      break;
    }
    list += (i ? ", " : "") + e.exported[i].name + "/" + elf_type_name(e.exported[i].type);
  }
  c.require(!e.exported.empty(), "no defined dynamic symbol exported");
  c.require(e.exported.size() == 1, strf("%zu exported symbols: ", e.exported.size()) + list);
  const ElfSymbol& s = e.exported[0];
  c.require(s.name == FLAGOS_PLUGIN_ENTRY_SYMBOL, "the one exported symbol is " + s.name);
  c.expect(s.type == STT_FUNC, "the entry symbol is " + std::string(elf_type_name(s.type)) +
                                   ", not FUNC");
  std::string versions;
  for (const auto& v : e.version_defs) versions += (versions.empty() ? "" : ",") + v;
  c.note(s.name + (versions.empty() ? "" : " (version definitions: " + versions + ")"));
}

// Without PT_GNU_STACK, or with it executable, dlopen makes every thread
// stack of the host process executable (newer glibc refuses the load).
void no_exec_stack(Ctx& c) {
  ElfInfo e = read_elf(c);
  c.require(e.has_gnu_stack, "no PT_GNU_STACK header: the loader assumes an executable stack");
  c.require(!e.exec_stack, "PT_GNU_STACK asks for an executable stack");
}

void no_textrel(Ctx& c) {
  ElfInfo e = read_elf(c);
  c.require(!e.textrel, "text relocations present (code not built -fPIC)");
}

void loads_rtld_local(Ctx& c) {
  dlerror();
  void* h = dlopen(c.plugin.path().c_str(), RTLD_NOW | RTLD_LOCAL);
  const char* err = dlerror();
  c.require(h != nullptr, std::string("dlopen(RTLD_NOW|RTLD_LOCAL) failed: ") + (err ? err : "?"));
  c.expect(h == c.plugin.dl(), "a second dlopen of the same path returned another handle");
  c.expect(dlsym(h, FLAGOS_PLUGIN_ENTRY_SYMBOL) != nullptr, "entry symbol not found via dlsym");
  dlclose(h);  // drops only the reference taken here
  c.note("all symbols resolved at load (RTLD_NOW)");
}

// RTLD_LOCAL must keep the plugin out of the global scope; a library linked
// with -z global (DF_1_GLOBAL) would leak its symbols to later loads.
void not_in_global_scope(Ctx& c) {
  void* sym = dlsym(RTLD_DEFAULT, FLAGOS_PLUGIN_ENTRY_SYMBOL);
  c.require(sym == nullptr, "the entry symbol is visible through RTLD_DEFAULT after an "
                            "RTLD_LOCAL load");
}

// The core deduplicates loads by file identity; the loader must agree that a
// symlinked path (lib -> lib64, site-packages links) is the same object.
void symlink_same_handle(Ctx& c) {
  char real[PATH_MAX];
  c.require(realpath(c.plugin.path().c_str(), real) != nullptr, "realpath failed");
  const char* tmp = getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/flagos-conformance-XXXXXX";
  std::vector<char> dir(templ.begin(), templ.end());
  dir.push_back('\0');
  c.require(mkdtemp(dir.data()) != nullptr, "mkdtemp failed");
  std::string link = std::string(dir.data()) + "/libflagos_symlinked.so";
  bool linked = symlink(real, link.c_str()) == 0;
  void* h = linked ? dlopen(link.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (linked) unlink(link.c_str());
  rmdir(dir.data());
  c.require(linked, "symlink failed");
  c.require(h != nullptr, "dlopen through a symlink failed");
  bool same = h == c.plugin.dl();
  dlclose(h);
  c.require(same, "dlopen through a symlink returned a different handle (the plugin would "
                  "be loaded twice)");
}

}  // namespace

Group packaging_group() {
  Group g("packaging", "ELF exports, stack and relocations; RTLD_LOCAL load; symlink dedup");
  g.needs_api = false;
  g.uses_device = false;
  g.add("one-exported-symbol", one_exported_symbol)
      .add("no-executable-stack", no_exec_stack)
      .add("no-text-relocations", no_textrel)
      .add("loads-rtld-now-local", loads_rtld_local)
      .add("not-in-global-scope", not_in_global_scope)
      .add("symlink-same-handle", symlink_same_handle);
  return g;
}

}  // namespace conformance
