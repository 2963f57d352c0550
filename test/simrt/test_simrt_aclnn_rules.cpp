// The simulated aclnn library's rules (vendors/ascend_aclnn.cpp): each
// launch and GetWorkspaceSize rule with its aclnnStatus and message, the init
// rule and SIMRT_FAIL.
#include "aclnn_client.h"

using namespace aclnn_test;

TEST_CASE("aclnn: launch rules, each with its code and message") {
  void* s = init_stream();
  Lib& l = L();
  void *a = upload<float>({1, 2, 3, 4}), *o = upload<float>({0, 0, 0, 0});
  uint64_t ws = 0;
  void* ex = nullptr;
  REQUIRE(l.mm_ws(tensor({2, 2}, {2, 1}, 0, kFloat, a), tensor({2, 2}, {2, 1}, 0, kFloat, a),
                  tensor({2, 2}, {2, 1}, 0, kFloat, o), 0, &ws, &ex) == 0);
  REQUIRE(ws == 16);
  void* work = nullptr;
  REQUIRE(l.malloc(&work, ws, 0) == 0);
  CHECK(l.mm(work, ws - 1, ex, s) == kInvalid);
  CHECK(recent().find("aclnnMm: workspaceSize 15 is less than the 16 bytes") != std::string::npos);
  char host[64];
  CHECK(l.mm(host, ws, ex, s) == kInvalid);
  CHECK(recent().find("workspace") != std::string::npos);
  CHECK(l.mm(nullptr, ws, ex, s) == kInvalid);
  CHECK(l.add(work, ws, ex, s) == kInvalid);
  CHECK(recent().find("aclnnAdd: executor") != std::string::npos);
  CHECK(recent().find("prepared by aclnnMmGetWorkspaceSize") != std::string::npos);
  CHECK(l.destroy_executor(ex) == kInvalid);  // single-use: only its launch frees it
  CHECK(l.mm(work, ws, ex, reinterpret_cast<void*>(0x1234)) == kRuntime);  // not a stream
  CHECK(l.mm(nullptr, 0, nullptr, s) == kNullptr);
  REQUIRE(l.mm(work, ws, ex, s) == 0);  // none of the refusals used it up
  REQUIRE(l.sync(s) == 0);
  CHECK(download<float>(o, 4) == std::vector<float>{7, 10, 15, 22});
  CHECK(l.mm(work, ws, ex, s) == kInvalid);  // freed by its first launch
  CHECK(recent().find("launched once and not marked repeatable") != std::string::npos);
  // Tensor memory: freed before the launch, or a view past its allocation.
  void* gone = upload<float>({1, 2, 3, 4});
  REQUIRE(l.add_ws(tensor({4}, {1}, 0, kFloat, gone), tensor({4}, {1}, 0, kFloat, a), f32(1),
                   tensor({4}, {1}, 0, kFloat, o), &ws, &ex) == 0);
  REQUIRE(l.free(gone) == 0);
  CHECK(l.add(nullptr, 0, ex, s) == kInvalid);
  CHECK(recent().find("self's data") != std::string::npos);
  REQUIRE(l.mul_ws(tensor({5}, {1}, 0, kFloat, a), tensor({5}, {0}, 0, kFloat, a), tensor({5}, {1}, 0, kFloat, o),
                   &ws, &ex) == 0);
  CHECK(l.mul(nullptr, 0, ex, s) == kInvalid);
  CHECK(recent().find("out's data") == std::string::npos);
  CHECK(recent().find("self's data") != std::string::npos);
  for (void* p : {a, o, work}) CHECK(l.free(p) == 0);
}


TEST_CASE("aclnn: GetWorkspaceSize refuses bad arguments and makes no executor") {
  init_stream();
  Lib& l = L();
  void *f = upload<float>({1, 2, 3, 4, 5, 6}), *i = upload<int64_t>({1, 2, 3, 4, 5, 6});
  uint64_t ws = 0;
  void* ex = nullptr;
  CHECK(l.add_ws(tensor({3}, {1}, 0, kFloat, f), tensor({3}, {1}, 0, kInt64, i), f32(1),
                 tensor({3}, {1}, 0, kFloat, f), &ws, &ex) == kInvalid);
  CHECK(ex == nullptr);
  CHECK(recent().find("aclnnAddGetWorkspaceSize: mixed dtypes (self ACL_FLOAT, other ACL_INT64") != std::string::npos);
  CHECK(l.div_ws(tensor({3}, {1}, 0, kInt64, i), tensor({3}, {1}, 0, kInt64, i), tensor({3}, {1}, 0, kInt64, i),
                 &ws, &ex) == kInvalid);
  CHECK(recent().find("ACL_INT64 is not supported") != std::string::npos);
  CHECK(l.mul_ws(tensor({2, 3}, {3, 1}, 0, kFloat, f), tensor({2}, {1}, 0, kFloat, f), tensor({2, 3}, {3, 1}, 0, kFloat, f),
                 &ws, &ex) == kInvalid);
  CHECK(recent().find("other's shape [2] does not broadcast to out's shape [2,3]") != std::string::npos);
  CHECK(l.mm_ws(tensor({2, 3}, {3, 1}, 0, kFloat, f), tensor({2, 3}, {3, 1}, 0, kFloat, f),
                tensor({2, 3}, {3, 1}, 0, kFloat, f), 0, &ws, &ex) == kInvalid);
  CHECK(recent().find("do not multiply") != std::string::npos);
  CHECK(l.mm_ws(tensor({6}, {1}, 0, kFloat, f), tensor({6}, {1}, 0, kFloat, f), tensor({6}, {1}, 0, kFloat, f), 0,
                &ws, &ex) == kInvalid);
  double half = 0.5;
  CHECK(l.add_ws(tensor({3}, {1}, 0, kInt64, i), tensor({3}, {1}, 0, kInt64, i), l.scalar(&half, kDouble),
                 tensor({3}, {1}, 0, kInt64, i), &ws, &ex) == kInvalid);
  CHECK(l.add_ws(tensor({3}, {1}, 0, kFloat, f), nullptr, f32(1), tensor({3}, {1}, 0, kFloat, f), &ws, &ex) == kNullptr);
  void* dead = tensor({3}, {1}, 0, kFloat, f);
  REQUIRE(l.destroy_tensor(dead) == 0);
  CHECK(l.destroy_tensor(dead) == kInvalid);
  CHECK(l.neg_ws(dead, tensor({3}, {1}, 0, kFloat, f), &ws, &ex) == kInvalid);
  CHECK(recent().find("not a live aclTensor") != std::string::npos);
  CHECK(ex == nullptr);
  CHECK((l.free(f) == 0 && l.free(i) == 0));
}


TEST_CASE("aclnn: before aclInit and under SIMRT_FAIL (own process)") {
  if (std::getenv("SIMRT_ACLNN_CHILD") == nullptr) {
    simrt_test::Run r = child("aclnn: before aclInit and under SIMRT_FAIL (own process)", {"SIMRT_FAIL=aclnnNeg:1:999"});
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.out.find("All tests passed") != std::string::npos);
    return;
  }
  Lib& l = L();
  void *t = tensor({1}, {1}, 0, kFloat, nullptr), *ex = nullptr;  // objects need no aclInit
  uint64_t ws = 0;
  CHECK(l.neg_ws(t, t, &ws, &ex) == kRuntime);
  CHECK(recent() == "aclnnNegGetWorkspaceSize: aclInit must be called before any other AscendCL call");
  void* s = init_stream();
  void* d = upload<float>({2});
  REQUIRE(l.neg_ws(tensor({1}, {1}, 0, kFloat, d), tensor({1}, {1}, 0, kFloat, d), &ws, &ex) == 0);
  CHECK(l.neg(nullptr, 0, ex, s) == 999);  // the first aclnnNeg call, injected
  REQUIRE((l.neg(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<float>(d, 1) == std::vector<float>{-2});
}
