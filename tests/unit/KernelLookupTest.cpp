// Kernel lookup by name (the four rules, ambiguity, "did you mean") and
// launch lookup by ordinal or capture index, over tables made here.
#include "Catch.h"

#include "capture/KernelLookup.h"

using namespace r3;

namespace {

std::vector<KernelName> names(const std::vector<std::string> &Mangled) {
  return kernelNamesOf(Mangled);
}

/// The index the lookup finds, or its message.
std::string lookup(const std::vector<KernelName> &K, const std::string &Given) {
  auto I = lookupKernel(K, Given, "cap.h5", "the capture");
  return I ? std::to_string(*I) : I.error().message();
}

const std::vector<std::string> Mixed = {
    "_Z8jacobi2dPKfPfii",        // jacobi2d(float const*, float*, int, int)
    "_ZN2ns5reactEPfi",          // ns::react(float*, int)
    "_Z5scaleIfEvPT_S0_",        // void scale<float>(float*, float)
    "saxpy",                     // extern "C"
    "_ZN12_GLOBAL__N_14haloEPf", // (anonymous namespace)::halo(float*)
    "_ZN2ns1CIiE4stepEPf"};      // ns::C<int>::step(float*)

} // namespace

TEST_CASE("a kernel is found by its mangled or demangled name", "[lookup]") {
  auto K = names(Mixed);
  CHECK(lookup(K, "_Z8jacobi2dPKfPfii") == "0");
  CHECK(lookup(K, "jacobi2d(float const*, float*, int, int)") == "0");
  CHECK(lookup(K, "saxpy") == "3");
  CHECK(lookup(K, "void scale<float>(float*, float)") == "2");
}

TEST_CASE("a kernel is found by its bare name when that is unique",
          "[lookup]") {
  auto K = names(Mixed);
  CHECK(lookup(K, "jacobi2d") == "0");
  CHECK(lookup(K, "ns::react") == "1");
  CHECK(lookup(K, "scale<float>") == "2"); // the return type goes too
  CHECK(lookup(K, "(anonymous namespace)::halo") == "4");
  CHECK(lookup(K, "ns::C<int>::step") == "5");
}

TEST_CASE("a kernel is found without its namespace or template arguments",
          "[lookup]") {
  auto K = names(Mixed);
  CHECK(lookup(K, "react") == "1");
  CHECK(lookup(K, "scale") == "2");
  CHECK(lookup(K, "halo") == "4");
  CHECK(lookup(K, "step") == "5");
  CHECK(lookup(K, "C<int>::step") == "5");
  CHECK(lookup(K, "ns::C::step") == "5");
}

TEST_CASE("an earlier rule wins over a later one", "[lookup]") {
  // "react" is the bare name of one kernel and a tail of the other's.
  auto K = names({"_ZN2ns5reactEPfi", "_Z5reactPfi"});
  CHECK(lookup(K, "react") == "1");
  CHECK(lookup(K, "ns::react") == "0");
}

TEST_CASE("a name several kernels have is ambiguous", "[lookup]") {
  auto K = names(
      {"_Z3addPfi", "_Z3addPdi", "_Z5scaleIfEvPT_S0_", "_Z5scaleIdEvPT_S0_"});
  CHECK(lookup(K, "add") ==
        "cap.h5: the kernel name 'add' is ambiguous in the capture: it names "
        "add(float*, int), add(double*, int); give the full demangled name or "
        "the mangled one");
  CHECK(lookup(K, "scale") ==
        "cap.h5: the kernel name 'scale' is ambiguous in the capture: it names "
        "void scale<float>(float*, float), void scale<double>(double*, "
        "double); give the full demangled name or the mangled one");
  CHECK(lookup(K, "add(double*, int)") == "1");
  CHECK(lookup(K, "scale<double>") == "3");
}

TEST_CASE("extern \"C\" names are not demangled as types", "[lookup]") {
  // __cxa_demangle alone reads "f" as the type float.
  auto K = names({"f", "d"});
  CHECK(K[0].Demangled.empty());
  CHECK(lookup(K, "f") == "0");
  CHECK(lookup(K, "float") == "cap.h5: no kernel 'float' in the capture "
                              "(kernels: f, d)");
}

TEST_CASE("one kernel listed twice is not ambiguous", "[lookup]") {
  auto K = names({"_Z3addPfi", "_Z3addPfi"});
  CHECK(lookup(K, "add") == "0");
}

TEST_CASE("a name that matches nothing suggests the nearest", "[lookup]") {
  auto K = names(Mixed);
  CHECK(lookup(K, "jacobi") ==
        "cap.h5: no kernel 'jacobi' in the capture; did you mean 'jacobi2d'?");
  CHECK(lookup(K, "saxyp") ==
        "cap.h5: no kernel 'saxyp' in the capture; did you mean 'saxpy'?");
  CHECK(lookup(K, "gemm") ==
        "cap.h5: no kernel 'gemm' in the capture (kernels: jacobi2d(float "
        "const*, float*, int, int), ns::react(float*, int), void "
        "scale<float>(float*, float), saxpy, (anonymous "
        "namespace)::halo(float*), ns::C<int>::step(float*))");
  CHECK(lookup({}, "k") == "cap.h5: no kernel 'k' in the capture (kernels: "
                           "none)");
}

TEST_CASE("an ambiguous bare name is not suggested", "[lookup]") {
  auto K = names({"_Z3addPfi", "_Z3addPdi"});
  // "adds" is one edit from "add", which would be ambiguous: the message
  // lists the kernels instead.
  CHECK(lookup(K, "adds").find("(kernels: add(float*, int), add(double*, "
                               "int))") != std::string::npos);
}

// --- launches ---

namespace {

/// A capture of kernels named Mangled, with launches (kernel, ordinal) in
/// this order, each kernel launched InApp times in the application.
struct Tables {
  std::vector<KernelInfo> Kernels;
  std::vector<LaunchInfo> Launches;
  CaptureView view() const { return {"cap.h5", Kernels, Launches}; }
};

Tables tables(const std::vector<std::string> &Mangled,
              const std::vector<std::pair<uint32_t, uint64_t>> &Launches,
              size_t InApp) {
  Tables T;
  for (const std::string &M : Mangled) {
    KernelInfo K;
    K.Name = M;
    K.AppDurationsNs.assign(InApp, 1000);
    T.Kernels.push_back(K);
  }
  for (auto [K, O] : Launches) {
    LaunchInfo L;
    L.Kernel = K;
    L.Ordinal = O;
    T.Launches.push_back(L);
  }
  return T;
}

std::string launch(const Tables &T, std::optional<uint32_t> K,
                   const std::string &Text) {
  auto Ref = parseLaunchRef(Text);
  REQUIRE(Ref);
  auto L = K ? findLaunch(T.view(), *K, *Ref) : findLaunch(T.view(), *Ref);
  return L ? "@" + std::to_string(*L) : L.error().message();
}

} // namespace

TEST_CASE("launch numbers parse as ordinals or capture indices", "[lookup]") {
  auto A = parseLaunchRef("3");
  REQUIRE(A);
  CHECK(A->By == LaunchNumbering::Ordinal);
  CHECK(A->Number == 3);
  auto B = parseLaunchRef("@12");
  REQUIRE(B);
  CHECK(B->By == LaunchNumbering::CaptureIndex);
  CHECK(B->Number == 12);
  CHECK(launchRefText(*B) == "@12");
  CHECK_FALSE(parseLaunchRef("@"));
  CHECK_FALSE(parseLaunchRef("-1"));
  CHECK_FALSE(parseLaunchRef("first"));
  CHECK_FALSE(parseLaunchRef("@99999999999"));
}

TEST_CASE("a launch ordinal is the kernel's, not the capture's", "[lookup]") {
  // Two kernels, interleaved: a0 b0 a1 b1 a2.
  Tables T = tables({"a", "b"}, {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}}, 3);
  CHECK(launch(T, 0, "2") == "@4");
  CHECK(launch(T, 1, "1") == "@3");
  CHECK(launchesOf(T.view(), 1) == std::vector<uint32_t>{1, 3});
  CHECK(launch(T, 1, "@3") == "@3");
  CHECK(launch(T, 0, "@3") ==
        "cap.h5: launch @3 is launch 1 of kernel 'b', not a launch of 'a'");
  CHECK(launch(T, 0, "@5") ==
        "cap.h5: no launch @5: the capture holds 5 launches (@0 to @4)");
}

TEST_CASE("a launch out of range says which launches there are", "[lookup]") {
  Tables T = tables({"_Z1kPf"}, {{0, 0}, {0, 1}, {0, 2}}, 3);
  CHECK(launch(T, 0, "3") ==
        "cap.h5: kernel 'k' has no launch 3; launches are counted from 0: "
        "'k' was launched 3 times (launches 0 to 2)");
  Tables Once = tables({"k"}, {{0, 0}}, 1);
  CHECK(launch(Once, 0, "1") ==
        "cap.h5: kernel 'k' has no launch 1; launches are counted from 0: "
        "'k' was launched once (launch 0)");
}

TEST_CASE("a capture that holds some launches names them", "[lookup]") {
  // r3 record --launch 3 of a kernel the application launched 10 times.
  Tables T = tables({"k"}, {{0, 3}}, 10);
  CHECK(launch(T, 0, "3") == "@0");
  CHECK(launch(T, std::nullopt, "3") == "@0");
  CHECK(launch(T, 0, "0") ==
        "cap.h5: kernel 'k' has no recorded launch 0: the capture holds its "
        "launch 3 (of 10 in the application); launches are numbered from 0 in "
        "the order the application made them");
  Tables Gaps = tables({"k"}, {{0, 0}, {0, 2}, {0, 5}}, 0);
  CHECK(launch(Gaps, 0, "1").find("holds its launches 0, 2, 5;") !=
        std::string::npos);
  Tables None = tables({"k", "j"}, {{1, 0}}, 1);
  CHECK(launch(None, 0, "0") == "cap.h5: kernel 'k' has no recorded launch "
                                "(the capture holds none of its launches)");
}

TEST_CASE("an ordinal without a kernel must belong to one kernel", "[lookup]") {
  Tables T = tables({"a", "b"}, {{0, 0}, {1, 0}, {0, 1}}, 2);
  CHECK(launch(T, std::nullopt, "1") == "@2");
  CHECK(launch(T, std::nullopt, "@1") == "@1");
  CHECK(launch(T, std::nullopt, "0") ==
        "cap.h5: launch 0 is ambiguous: 'a' and 'b' each have a launch 0; "
        "name the kernel, or the capture's launch (@0 or @1)");
  CHECK(launch(T, std::nullopt, "4") ==
        "cap.h5: no kernel has a recorded launch 4 (the capture holds 'a' "
        "launches 0 to 1; 'b' launch 0)");
}

TEST_CASE("one kernel in two modules is found by the copy that ran",
          "[lookup]") {
  Tables T = tables({"_Z1kPf", "_Z1kPf"}, {{1, 0}}, 1);
  T.Kernels[1].Module = 1;
  auto K = findKernel(T.view(), "k");
  REQUIRE(K);
  CHECK(*K == 1);
  T.Launches.push_back(T.Launches.back());
  T.Launches.back().Kernel = 0;
  T.Launches.back().Ordinal = 1;
  auto Both = findKernel(T.view(), "k");
  REQUIRE_FALSE(Both);
  CHECK(Both.error().message() ==
        "cap.h5: kernel 'k(float*)' is in 2 modules of the capture (modules "
        "0, 1), each with recorded launches, which r3 cannot tell apart by "
        "name");
}

TEST_CASE("messages name a kernel by its bare name when it is unique",
          "[lookup]") {
  Tables T = tables({"_Z3addPfi", "_Z3addPdi", "_Z8jacobi2dPKfPfii"}, {}, 0);
  CHECK(shownKernelName(T.view(), 0) == "add(float*, int)");
  CHECK(shownKernelName(T.view(), 2) == "jacobi2d");
  Tables L = tables({"_Z8jacobi2dPKfPfii"}, {{0, 3}}, 8);
  CHECK(shownLaunchName(L.view(), 0) == "launch 3 of 'jacobi2d'");
}
