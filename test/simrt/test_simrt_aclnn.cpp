// The simulated aclnn operator library (vendors/ascend_aclnn.cpp):
// ascend/lib64/libopapi.so beside libascendcl.so, over the same engine
// instance: its exports, results, and repeatable executors.
#include "aclnn_client.h"

using namespace aclnn_test;

TEST_CASE("aclnn: libopapi.so exports the aclnn calls, and aclGetRecentErrMsg stays libascendcl.so's") {
  const auto info = simrt_test::dyn_info(simrt_test::root() + "/ascend/lib64/libopapi.so");
  CHECK(info.soname == "libopapi.so");
  const std::set<std::string> want = {
      "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar", "aclDestroyScalar", "aclCreateIntArray",
      "aclDestroyIntArray", "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclSetInputTensorAddr",
      "aclSetOutputTensorAddr", "aclnnAddGetWorkspaceSize", "aclnnAdd", "aclnnSubGetWorkspaceSize", "aclnnSub",
      "aclnnMulGetWorkspaceSize", "aclnnMul", "aclnnDivGetWorkspaceSize", "aclnnDiv", "aclnnNegGetWorkspaceSize",
      "aclnnNeg", "aclnnAbsGetWorkspaceSize", "aclnnAbs", "aclnnExpGetWorkspaceSize", "aclnnExp",
      "aclnnMmGetWorkspaceSize", "aclnnMm"};
  CHECK(info.symbols == want);
  // It needs libascendcl.so: a lookup through its handle finds that library's
  // aclGetRecentErrMsg (a plugin reads aclnn failures that way).
  CHECK(dlsym(aclnn_test::L().op, "aclGetRecentErrMsg") == dlsym(aclnn_test::L().acl, "aclGetRecentErrMsg"));
  CHECK(dlsym(aclnn_test::L().op, "aclGetRecentErrMsg") != nullptr);
}


TEST_CASE("aclnn: operator results with broadcast and a transposed input") {
  void* s = init_stream();
  Lib& l = L();
  uint64_t ws = 99;
  void* ex = nullptr;
  // add: [2,3] + 2 * [3] (broadcast); the aclTensors may go once the executor exists.
  void *x = upload<float>({1, 2, 3, 4, 5, 6}), *y = upload<float>({10, 20, 30}), *o = upload<float>(std::vector<float>(6));
  void *tx = tensor({2, 3}, {3, 1}, 0, kFloat, x), *ty = tensor({3}, {1}, 0, kFloat, y), *to = tensor({2, 3}, {3, 1}, 0, kFloat, o);
  REQUIRE(l.add_ws(tx, ty, f32(2), to, &ws, &ex) == 0);
  CHECK(ws == 0);
  CHECK((l.destroy_tensor(tx) == 0 && l.destroy_tensor(ty) == 0 && l.destroy_tensor(to) == 0));
  REQUIRE(l.add(nullptr, 0, ex, s) == 0);
  REQUIRE(l.sync(s) == 0);
  CHECK(download<float>(o, 6) == std::vector<float>{21, 42, 63, 24, 45, 66});
  // mul: self is the transpose of a [2,3] stored at element offset 1; other a
  // column broadcast through an explicit 0 stride.
  void* m = upload<float>({-1, 1, 2, 3, 4, 5, 6});
  void* col = upload<float>({1, 2, 3});
  REQUIRE(l.mul_ws(tensor({3, 2}, {1, 3}, 1, kFloat, m), tensor({3, 2}, {1, 0}, 0, kFloat, col),
                   tensor({3, 2}, {2, 1}, 0, kFloat, o), &ws, &ex) == 0);
  REQUIRE(l.mul(nullptr, 0, ex, s) == 0);
  REQUIRE(l.sync(s) == 0);
  CHECK(download<float>(o, 6) == std::vector<float>{1, 4, 4, 10, 9, 18});
  // mm: [2,3] (a transposed [3,2]) x [3,4], through its n*m*4-byte workspace.
  void* a = upload<float>({1, 4, 2, 5, 3, 6});
  void* b = upload<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  void* mo = upload<float>(std::vector<float>(8));
  REQUIRE(l.mm_ws(tensor({2, 3}, {1, 2}, 0, kFloat, a), tensor({3, 4}, {4, 1}, 0, kFloat, b),
                  tensor({2, 4}, {4, 1}, 0, kFloat, mo), 1, &ws, &ex) == 0);
  CHECK(ws == 2 * 4 * sizeof(float));
  void* work = nullptr;
  REQUIRE(l.malloc(&work, ws, 0) == 0);
  REQUIRE(l.mm(work, ws, ex, s) == 0);
  REQUIRE(l.sync(s) == 0);
  CHECK(download<float>(mo, 8) == std::vector<float>{38, 44, 50, 56, 83, 98, 113, 128});
  // int64 add and sub (alpha as ACL_INT64 and ACL_DOUBLE), neg; float div and exp.
  void *i = upload<int64_t>({5, -7}), *j = upload<int64_t>({1, 2}), *io = upload<int64_t>({0, 0});
  int64_t three = 3;
  double two = 2.0;
  REQUIRE(l.add_ws(tensor({2}, {1}, 0, kInt64, i), tensor({2}, {1}, 0, kInt64, j), l.scalar(&three, kInt64),
                   tensor({2}, {1}, 0, kInt64, io), &ws, &ex) == 0);
  REQUIRE((l.add(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<int64_t>(io, 2) == std::vector<int64_t>{8, -1});
  REQUIRE(l.sub_ws(tensor({2}, {1}, 0, kInt64, i), tensor({2}, {1}, 0, kInt64, j), l.scalar(&two, kDouble),
                   tensor({2}, {1}, 0, kInt64, io), &ws, &ex) == 0);
  REQUIRE((l.sub(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<int64_t>(io, 2) == std::vector<int64_t>{3, -11});
  REQUIRE(l.neg_ws(tensor({2}, {1}, 0, kInt64, i), tensor({2}, {1}, 0, kInt64, io), &ws, &ex) == 0);
  REQUIRE((l.neg(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<int64_t>(io, 2) == std::vector<int64_t>{-5, 7});
  REQUIRE(l.div_ws(tensor({2}, {1}, 0, kFloat, x), tensor({2}, {1}, 0, kFloat, y), tensor({2}, {1}, 0, kFloat, o),
                   &ws, &ex) == 0);
  REQUIRE((l.div(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<float>(o, 2) == std::vector<float>{0.1f, 0.1f});
  REQUIRE(l.exp_ws(tensor({2}, {1}, 0, kFloat, x), tensor({2}, {1}, 0, kFloat, o), &ws, &ex) == 0);
  REQUIRE((l.exp(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(std::fabs(download<float>(o, 2)[1] - std::exp(2.0f)) < 1e-5f);
  for (void* p : {x, y, o, m, col, a, b, mo, work, i, j, io}) CHECK(l.free(p) == 0);
}


TEST_CASE("aclnn: a repeatable executor relaunched on new addresses") {
  void* s = init_stream();
  Lib& l = L();
  void *x1 = upload<float>({1, 2, 3}), *x2 = upload<float>({10, 20, 30}), *y = upload<float>({1, 1, 1});
  void *o1 = upload<float>({0, 0, 0}), *o2 = upload<float>({0, 0, 0});
  void *tx = tensor({3}, {1}, 0, kFloat, x1), *ty = tensor({3}, {1}, 0, kFloat, y), *to = tensor({3}, {1}, 0, kFloat, o1);
  uint64_t ws = 0;
  void* ex = nullptr;
  REQUIRE(l.add_ws(tx, ty, f32(1), to, &ws, &ex) == 0);
  CHECK(l.set_in(ex, 0, tx, x2) == kInvalid);  // not repeatable yet
  CHECK(recent().find("aclSetInputTensorAddr") != std::string::npos);
  REQUIRE(l.repeatable(ex) == 0);
  REQUIRE((l.add(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<float>(o1, 3) == std::vector<float>{2, 3, 4});
  REQUIRE(l.set_in(ex, 0, tx, x2) == 0);
  REQUIRE(l.set_out(ex, 0, to, o2) == 0);
  REQUIRE((l.add(nullptr, 0, ex, s) == 0 && l.sync(s) == 0));
  CHECK(download<float>(o2, 3) == std::vector<float>{11, 21, 31});
  CHECK(download<float>(o1, 3) == std::vector<float>{2, 3, 4});
  CHECK(l.set_in(ex, 2, tx, x1) == kInvalid);       // add has two inputs
  CHECK(l.set_in(ex, 1, tx, x1) == kInvalid);       // input 1 is `other`, not tx
  CHECK(l.set_in(ex, 0, tx, nullptr) == kNullptr);
  // Enqueued work keeps the addresses of its launch: held behind a gate, then
  // the executor is repointed and destroyed before it runs.
  simrt_test::Gate gate;
  REQUIRE(l.host_func(s, &simrt_test::Gate::hold, &gate) == 0);
  REQUIRE(l.set_in(ex, 0, tx, x1) == 0);
  REQUIRE(l.add(nullptr, 0, ex, s) == 0);
  REQUIRE(l.set_in(ex, 0, tx, x2) == 0);
  REQUIRE(l.destroy_executor(ex) == 0);
  gate.open = true;
  REQUIRE(l.sync(s) == 0);
  CHECK(download<float>(o2, 3) == std::vector<float>{2, 3, 4});
  CHECK(l.add(nullptr, 0, ex, s) == kInvalid);  // destroyed
  CHECK(l.destroy_executor(ex) == kInvalid);
  for (void* p : {x1, x2, y, o1, o2}) CHECK(l.free(p) == 0);
}


TEST_CASE("aclnn: results and executors under SIMRT_GUARD=1 (own process)") {
  simrt_test::Run r = child("aclnn: operator results*,aclnn: a repeatable executor*", {"SIMRT_GUARD=1"});
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("All tests passed") != std::string::npos);
}
