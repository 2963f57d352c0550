// The tests' view of the simulated aclnn library (ascend/lib64/libopapi.so)
// and of the libascendcl.so calls it runs with, resolved with dlsym as a
// plugin would; small helpers for device buffers, tensors and child runs.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test_support.h"

namespace aclnn_test {

constexpr int kFloat = 0, kInt64 = 9, kDouble = 11, kNd = 2, kH2D = 1, kD2H = 2;
constexpr int32_t kNullptr = 161001, kInvalid = 161002, kRuntime = 361001;

using Alpha = int32_t (*)(const void*, const void*, const void*, void*, uint64_t*, void**);
using Binary = int32_t (*)(const void*, const void*, void*, uint64_t*, void**);
using Unary = int32_t (*)(const void*, void*, uint64_t*, void**);
using MmPrep = int32_t (*)(const void*, const void*, void*, int8_t, uint64_t*, void**);
using Launch = int32_t (*)(void*, uint64_t, void*, void*);

struct Lib {
  Lib() {
    acl = dlopen((simrt_test::root() + "/ascend/lib64/libascendcl.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    op = dlopen((simrt_test::root() + "/ascend/lib64/libopapi.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE((acl != nullptr && op != nullptr));
    get(acl, "aclInit", init), get(acl, "aclrtMalloc", malloc), get(acl, "aclrtFree", free);
    get(acl, "aclrtMemcpy", memcpy), get(acl, "aclrtCreateStream", create_stream);
    get(acl, "aclrtSynchronizeStream", sync), get(acl, "aclrtLaunchHostFunc", host_func);
    get(acl, "aclGetRecentErrMsg", recent);
    get(op, "aclCreateTensor", tensor), get(op, "aclDestroyTensor", destroy_tensor);
    get(op, "aclCreateScalar", scalar), get(op, "aclSetAclOpExecutorRepeatable", repeatable);
    get(op, "aclDestroyAclOpExecutor", destroy_executor);
    get(op, "aclSetInputTensorAddr", set_in), get(op, "aclSetOutputTensorAddr", set_out);
    get(op, "aclnnAddGetWorkspaceSize", add_ws), get(op, "aclnnAdd", add);
    get(op, "aclnnSubGetWorkspaceSize", sub_ws), get(op, "aclnnSub", sub);
    get(op, "aclnnMulGetWorkspaceSize", mul_ws), get(op, "aclnnMul", mul);
    get(op, "aclnnDivGetWorkspaceSize", div_ws), get(op, "aclnnDiv", div);
    get(op, "aclnnNegGetWorkspaceSize", neg_ws), get(op, "aclnnNeg", neg);
    get(op, "aclnnExpGetWorkspaceSize", exp_ws), get(op, "aclnnExp", exp);
    get(op, "aclnnMmGetWorkspaceSize", mm_ws), get(op, "aclnnMm", mm);
  }
  template <class F>
  static void get(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    REQUIRE(f != nullptr);
  }
  void *acl, *op;
  int (*init)(const char*);
  int (*malloc)(void**, size_t, int);
  int (*free)(void*);
  int (*memcpy)(void*, size_t, const void*, size_t, int);
  int (*create_stream)(void**);
  int (*sync)(void*);
  int (*host_func)(void*, void (*)(void*), void*);
  const char* (*recent)();
  void* (*tensor)(const int64_t*, uint64_t, int, const int64_t*, int64_t, int, const int64_t*, uint64_t, void*);
  int32_t (*destroy_tensor)(const void*);
  void* (*scalar)(void*, int);
  int32_t (*repeatable)(void*);
  int32_t (*destroy_executor)(void*);
  int32_t (*set_in)(void*, size_t, void*, void*);
  int32_t (*set_out)(void*, size_t, void*, void*);
  Alpha add_ws, sub_ws;
  Binary mul_ws, div_ws;
  Unary neg_ws, exp_ws;
  MmPrep mm_ws;
  Launch add, sub, mul, div, neg, exp, mm;
};

inline Lib& L() {
  static Lib lib;
  return lib;
}

inline void* init_stream() {
  const int rc = L().init(nullptr);
  REQUIRE((rc == 0 || rc == 100002));  // ACL_ERROR_REPEAT_INITIALIZE: an earlier test's
  void* s = nullptr;
  REQUIRE(L().create_stream(&s) == 0);
  return s;
}

inline std::string recent() {
  const char* m = L().recent();
  return m != nullptr ? m : "";
}

template <class T>
void* upload(const std::vector<T>& v) {
  void* d = nullptr;
  const size_t n = v.size() * sizeof(T);
  REQUIRE(L().malloc(&d, n, 0) == 0);
  REQUIRE(L().memcpy(d, n, v.data(), n, kH2D) == 0);
  // A pageable upload returns once staged and lands in the default stream's
  // order; ACL streams do not wait for it: the caller orders them.
  REQUIRE(L().sync(nullptr) == 0);
  return d;
}

template <class T>
std::vector<T> download(void* d, size_t count) {
  std::vector<T> v(count);
  REQUIRE(L().memcpy(v.data(), count * sizeof(T), d, count * sizeof(T), kD2H) == 0);
  return v;
}

inline void* tensor(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset, int dtype, void* data,
             int64_t storage = 16) {
  void* t = L().tensor(dims.data(), dims.size(), dtype, strides.data(), offset, kNd, &storage, 1, data);
  REQUIRE(t != nullptr);
  return t;
}

inline void* f32(float v) { return L().scalar(&v, kFloat); }

// Runs the named tests of this binary in a child with `env` (SIMRT_* is read
// once per process): exit status and output.
inline simrt_test::Run child(const std::string& spec, const std::vector<std::string>& env) {
  char exe[4096] = {};
  REQUIRE(readlink("/proc/self/exe", exe, sizeof exe - 1) > 0);
  std::string out = "/tmp/simrt_aclnn_" + std::to_string(getpid()) + ".txt";
  std::vector<std::string> envs(env);
  envs.push_back("SIMRT_ACLNN_CHILD=1");
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SIMRT_", 6) != 0) envs.push_back(*e);
  std::vector<char*> argv{exe, const_cast<char*>(spec.c_str()), nullptr}, envp;
  for (auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  REQUIRE(posix_spawn(&pid, exe, &fa, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  int st = 0;
  waitpid(pid, &st, 0);
  std::ifstream f(out);
  simrt_test::Run r{WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                    std::string(std::istreambuf_iterator<char>(f), {})};
  unlink(out.c_str());
  return r;
}

}  // namespace aclnn_test
