// Helpers shared by the simrt tests: the vendor libraries loaded once per
// process, pinned memory per vendor, scenario subprocesses, ELF reading.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../cpp/catch.hpp"
#include "simrt_client.h"

extern char** environ;

namespace simrt_test {

inline std::string root() { return SIMRT_ROOT; }

// One loaded instance per vendor for the whole process (the sims are never
// unloaded: like real runtimes they keep worker threads).
inline Rt& rt(const Vendor& v) {
  static std::map<std::string, std::unique_ptr<Rt>> loaded;
  auto& slot = loaded[v.name];
  if (!slot) slot = std::make_unique<Rt>(root() + "/" + v.lib, v.prefix);
  return *slot;
}

// Pinned host memory through each vendor's own call and shape.
inline void* pinned(const Vendor& v, size_t n) {
  Rt& r = rt(v);
  void* p = nullptr;
  std::string name = v.name;
  int rc = -1;
  if (name == "cuda") rc = reinterpret_cast<int (*)(void**, size_t)>(r.sym("cudaMallocHost"))(&p, n);
  if (name == "metax") rc = reinterpret_cast<int (*)(void**, size_t, unsigned)>(r.sym("mcMallocHost"))(&p, n, 0);
  if (name == "dcu") rc = reinterpret_cast<int (*)(void**, size_t, unsigned)>(r.sym("hipHostMalloc"))(&p, n, 0);
  if (name == "musa") rc = reinterpret_cast<int (*)(void**, size_t)>(r.sym("musaMallocHost"))(&p, n);
  REQUIRE(rc == 0);
  return p;
}
inline void unpin(const Vendor& v, void* p) {
  std::string name = v.name;
  const char* fn = name == "cuda" ? "cudaFreeHost" : name == "metax" ? "mcFreeHost"
                 : name == "dcu" ? "hipHostFree" : "musaFreeHost";
  REQUIRE(reinterpret_cast<int (*)(void*)>(rt(v).sym(fn))(p) == 0);
}

// A host function that holds its stream until released.
struct Gate {
  std::atomic<bool> open{false};
  static void hold(void* self) {
    while (!static_cast<Gate*>(self)->open) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
};

inline std::string error_text(Rt& r, int code) { return r.GetErrorString(code); }

struct Run {
  int status;  // exit code, or 128 + signal
  std::string out;
};

inline Run scenario(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::string out_path = "/tmp/simrt_scenario_" + std::to_string(getpid()) + ".txt";
  std::vector<std::string> all = {SIMRT_SCENARIO};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_all(env);
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SIMRT_", 6) != 0) env_all.push_back(*e);
  for (auto& e : env_all) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);  // stderr too: sanitizer reports
  pid_t pid;
  REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  int st = 0;
  waitpid(pid, &st, 0);
  std::ifstream f(out_path);
  Run r{WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
        std::string(std::istreambuf_iterator<char>(f), {})};
  unlink(out_path.c_str());
  return r;
}

// Dynamic symbols and SONAME of an ELF64 shared library, read from the file.
struct DynInfo {
  std::set<std::string> symbols;
  std::string soname;
};
inline DynInfo dyn_info(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string img((std::istreambuf_iterator<char>(f)), {});
  REQUIRE(img.size() > sizeof(Elf64_Ehdr));
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
  auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
  DynInfo info;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const char* strtab = img.data() + sh[sh[i].sh_link].sh_offset;
    if (sh[i].sh_type == SHT_DYNSYM) {
      auto* sym = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k)
        if (sym[k].st_shndx != SHN_UNDEF && sym[k].st_name != 0) info.symbols.insert(strtab + sym[k].st_name);
    } else if (sh[i].sh_type == SHT_DYNAMIC) {
      auto* d = reinterpret_cast<const Elf64_Dyn*>(img.data() + sh[i].sh_offset);
      for (; d->d_tag != DT_NULL; ++d)
        if (d->d_tag == DT_SONAME) info.soname = strtab + d->d_un.d_val;
    }
  }
  return info;
}

}  // namespace simrt_test
