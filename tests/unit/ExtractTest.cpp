// Kernel extraction (compile/Extract.h): what is copied, what is declared,
// which names and linkages the copies get, and every refusal's message. The
// modules are IR text, so each rule is tested on exactly the construct it is
// about.
#include "Catch.h"

#include "compile/Extract.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace llvm;
using namespace r3;

namespace {

const char *const Header =
    "target datalayout = "
    "\"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:"
    "32:64-S128\"\n"
    "target triple = \"x86_64-pc-linux-gnu\"\n";

std::unique_ptr<Module> parse(LLVMContext &Ctx, const std::string &Body) {
  SMDiagnostic Diag;
  auto M = parseAssemblyString(std::string(Header) + Body, Diag, Ctx);
  if (!M) {
    std::string Msg;
    raw_string_ostream OS(Msg);
    Diag.print("test", OS);
    FAIL(OS.str());
  }
  return M;
}

std::string print(const Module &M) {
  std::string S;
  raw_string_ostream OS(S);
  M.print(OS, nullptr);
  return OS.str();
}

ExtractedKernel extract(const Module &M, StringRef Kernel,
                        std::optional<unsigned> OptLevel = std::nullopt) {
  auto X = extractKernel(M, Kernel, OptLevel);
  if (!X)
    FAIL(toString(X.takeError()));
  REQUIRE_FALSE(verifyModule(*X->Module, &errs()));
  return std::move(*X);
}

std::string refusal(const std::string &IR, StringRef Kernel) {
  LLVMContext Ctx;
  auto M = parse(Ctx, IR);
  auto X = extractKernel(*M, Kernel);
  REQUIRE_FALSE(static_cast<bool>(X));
  return toString(X.takeError());
}

unsigned optLevelFlag(const Module &M) {
  auto *C =
      mdconst::extract_or_null<ConstantInt>(M.getModuleFlag("r3.opt-level"));
  REQUIRE(C);
  return C->getZExtValue();
}

const char *const CallGraph = R"(
declare double @sqrt(double)
declare void @unused_decl()
define internal double @leaf(double %x) {
  %r = call double @sqrt(double %x)
  ret double %r
}
define linkonce_odr double @inl(double %x) comdat {
  %r = call double @leaf(double %x)
  ret double %r
}
$inl = comdat any
define double @through_table(double %x) {
  ret double %x
}
define double @through_cast(double %x) {
  ret double %x
}
@table = internal constant [1 x ptr] [ptr @through_table]
@fp = global ptr null
define void @kernel(ptr %out, double %x) {
  %a = call double @inl(double %x)
  store double %a, ptr %out
  store ptr getelementptr (i8, ptr @through_cast, i64 0), ptr @fp
  %t = load ptr, ptr @table
  store ptr %t, ptr @fp
  ret void
}
define void @unrelated() {
  call void @unused_decl()
  ret void
}
)";

} // namespace

TEST_CASE("extraction copies the kernel and what it reaches", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, CallGraph);
  std::string Before = print(*M);
  ExtractedKernel X = extract(*M, "kernel");
  Module &E = *X.Module;
  CHECK(print(*M) == Before); // the source module is untouched

  Function *K = E.getFunction("kernel");
  REQUIRE(K);
  CHECK_FALSE(K->isDeclaration());
  CHECK(K->hasExternalLinkage());
  for (const char *Name : {"leaf", "inl", "through_table", "through_cast"}) {
    INFO(Name);
    Function *F = E.getFunction(Name);
    REQUIRE(F);
    CHECK_FALSE(F->isDeclaration());
    CHECK(F->hasInternalLinkage());
    CHECK_FALSE(F->hasComdat());
  }
  Function *Sqrt = E.getFunction("sqrt");
  REQUIRE(Sqrt);
  CHECK(Sqrt->isDeclaration());
  CHECK_FALSE(Sqrt->isDSOLocal());
  CHECK_FALSE(E.getFunction("unrelated"));
  CHECK_FALSE(E.getFunction("unused_decl"));
  CHECK(E.getTargetTriple() == M->getTargetTriple());
  CHECK(E.getDataLayoutStr() == M->getDataLayoutStr());
}

TEST_CASE("constant globals are copied, others declared and listed",
          "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
@coeffs = internal constant [4 x double] [double 1.0, double 2.0, double 3.0, double 4.0]
@ext_table = external constant [8 x i32]
@scale = global double 2.0
@counter = internal global i32 0
@unused = global i32 7
@ptrs = private constant [1 x ptr] [ptr @via_const]
@via_const = internal global i64 0
define double @kernel(i32 %i) {
  %p = getelementptr [4 x double], ptr @coeffs, i32 0, i32 %i
  %c = load double, ptr %p
  %s = load double, ptr @scale
  %n = load i32, ptr @counter
  %n1 = add i32 %n, 1
  store i32 %n1, ptr @counter
  %t = load i32, ptr @ext_table
  %q = load ptr, ptr @ptrs
  store i64 1, ptr %q
  %r = fmul double %c, %s
  ret double %r
}
)");
  ExtractedKernel X = extract(*M, "kernel");
  Module &E = *X.Module;

  GlobalVariable *Coeffs = E.getNamedGlobal("coeffs");
  REQUIRE(Coeffs);
  CHECK(Coeffs->hasInitializer());
  CHECK(Coeffs->hasPrivateLinkage());
  CHECK(E.getNamedGlobal("ptrs"));

  GlobalVariable *Scale = E.getNamedGlobal("scale");
  REQUIRE(Scale);
  CHECK(Scale->isDeclaration());
  CHECK(Scale->hasExternalLinkage());
  CHECK_FALSE(Scale->isDSOLocal());
  CHECK_FALSE(E.getNamedGlobal("counter"));
  GlobalVariable *Counter = E.getNamedGlobal("__r3_internal.counter");
  REQUIRE(Counter);
  CHECK(Counter->isDeclaration());
  CHECK(Counter->hasExternalLinkage());
  CHECK(E.getNamedGlobal("__r3_internal.via_const"));
  CHECK_FALSE(E.getNamedGlobal("unused"));

  // Every global the replay must resolve, in the source module's order, with
  // the source module's variable and its size.
  REQUIRE(X.Globals.size() == 4);
  CHECK(X.Globals[0].Name == "ext_table");
  CHECK(X.Globals[0].Size == 32);
  CHECK(X.Globals[1].Name == "scale");
  CHECK(X.Globals[1].Original == M->getNamedGlobal("scale"));
  CHECK(X.Globals[1].Size == 8);
  CHECK(X.Globals[2].Name == "__r3_internal.counter");
  CHECK(X.Globals[2].Original == M->getNamedGlobal("counter"));
  CHECK(X.Globals[2].Size == 4);
  CHECK(X.Globals[3].Name == "__r3_internal.via_const");
  CHECK(extractedGlobalName(*M->getNamedGlobal("counter")) ==
        "__r3_internal.counter");
}

TEST_CASE("clang's -O0 attributes are dropped, the user's kept", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
define internal void @o0_callee() #0 {
  ret void
}
define internal void @user_noinline() #1 {
  ret void
}
define void @kernel() #0 {
  call void @o0_callee()
  call void @user_noinline()
  ret void
}
attributes #0 = { noinline optnone nounwind "target-cpu"="x86-64" "target-features"="+sse2" }
attributes #1 = { noinline nounwind }
)");
  ExtractedKernel X = extract(*M, "kernel");
  for (const char *Name : {"kernel", "o0_callee"}) {
    INFO(Name);
    Function *F = X.Module->getFunction(Name);
    CHECK_FALSE(F->hasFnAttribute(Attribute::OptimizeNone));
    CHECK_FALSE(F->hasFnAttribute(Attribute::NoInline));
    CHECK(F->hasFnAttribute(Attribute::NoUnwind));
    CHECK(F->getFnAttribute("target-cpu").getValueAsString() == "x86-64");
    CHECK(F->getFnAttribute("target-features").getValueAsString() == "+sse2");
  }
  CHECK(X.Module->getFunction("user_noinline")
            ->hasFnAttribute(Attribute::NoInline));
  CHECK(optLevelFlag(*X.Module) == 0); // the kernel was optnone
}

TEST_CASE("the r3.opt-level module flag", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, "define void @kernel() {\n  ret void\n}\n");
  CHECK(optLevelFlag(*extract(*M, "kernel", 3).Module) == 3);
  CHECK(optLevelFlag(*extract(*M, "kernel").Module) == 2);
  // Extracting an extracted module keeps its level.
  ExtractedKernel Once = extract(*M, "kernel", 1);
  CHECK(optLevelFlag(*extract(*Once.Module, "kernel").Module) == 1);
  CHECK(optLevelFlag(*extract(*Once.Module, "kernel", 3).Module) == 3);
}

TEST_CASE("an internal kernel becomes external", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, "define internal i32 @k(i32 %x) {\n  ret i32 %x\n}\n");
  ExtractedKernel X = extract(*M, "k");
  CHECK(X.Module->getFunction("k")->hasExternalLinkage());
}

TEST_CASE("kernels that do not fit the argument slots are refused",
          "[extract]") {
  CHECK(refusal("declare void @k(ptr)\n", "k") ==
        "kernel 'k' cannot be recorded: it is not defined in '<string>' "
        "(only declared)");
  CHECK(refusal("declare void @other()\n", "k") ==
        "kernel 'k' cannot be recorded: it is not defined in '<string>'");
  CHECK(refusal("define void @k(i32 %n, ...) {\n  ret void\n}\n", "k") ==
        "kernel 'k' cannot be recorded: it is variadic");
  CHECK(refusal("%S = type { [4 x double] }\n"
                "define void @k(ptr byval(%S) %s) {\n  ret void\n}\n",
                "k") ==
        "kernel 'k' cannot be recorded: parameter 1 ('s') is an aggregate "
        "passed in memory (byval); pass a pointer to it instead");
  CHECK(refusal("%S = type { [4 x double] }\n"
                "define void @k(ptr sret(%S) %0, i32 %n) {\n  ret void\n}\n",
                "k") ==
        "kernel 'k' cannot be recorded: it returns an aggregate in memory "
        "(sret); return it through a pointer parameter instead");
  CHECK(refusal("%S = type { i32 }\n"
                "define void @k(i32 %a, ptr inalloca(%S) %b) {\n"
                "  ret void\n}\n",
                "k") ==
        "kernel 'k' cannot be recorded: parameter 2 ('b') is an aggregate "
        "passed in memory (inalloca); pass a pointer to it instead");
  CHECK(refusal("define void @k(i128 %wide) {\n  ret void\n}\n", "k") ==
        "kernel 'k' cannot be recorded: parameter 1 ('wide') has type i128, "
        "expected an integer of at most 64 bits, a float, a double or a "
        "pointer");
  CHECK(refusal("define void @k(<2 x double> %v) {\n  ret void\n}\n", "k") ==
        "kernel 'k' cannot be recorded: parameter 1 ('v') has type <2 x "
        "double>, expected an integer of at most 64 bits, a float, a double "
        "or a pointer");
  CHECK(refusal("define { i64, i64 } @k() {\n"
                "  ret { i64, i64 } zeroinitializer\n}\n",
                "k") ==
        "kernel 'k' cannot be recorded: it returns { i64, i64 }, expected "
        "void, an integer of at most 64 bits, a float, a double or a pointer");
  CHECK(refusal("@tls = thread_local global i32 0\n"
                "define internal void @helper() {\n"
                "  store i32 1, ptr @tls\n  ret void\n}\n"
                "define void @k() {\n  call void @helper()\n  ret void\n}\n",
                "k") ==
        "kernel 'k' cannot be recorded: it uses the thread-local variable "
        "'tls', which r3 does not record");
}

TEST_CASE("slot types", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, "");
  const DataLayout &DL = M->getDataLayout();
  auto Kind = [&](Type *T) { return slotType(*T, DL); };
  CHECK(Kind(PointerType::get(Ctx, 0))->Kind == SlotKind::Pointer);
  CHECK(Kind(PointerType::get(Ctx, 0))->Size == 8);
  CHECK(Kind(Type::getInt1Ty(Ctx))->Size == 1);
  CHECK(Kind(Type::getInt32Ty(Ctx))->Kind == SlotKind::Integer);
  CHECK(Kind(Type::getInt64Ty(Ctx))->Size == 8);
  CHECK(Kind(Type::getFloatTy(Ctx))->Kind == SlotKind::Float);
  CHECK(Kind(Type::getFloatTy(Ctx))->Size == 4);
  CHECK(Kind(Type::getDoubleTy(Ctx))->Size == 8);
  CHECK_FALSE(Kind(Type::getInt128Ty(Ctx)));
  CHECK_FALSE(Kind(Type::getHalfTy(Ctx)));
  CHECK_FALSE(Kind(Type::getX86_FP80Ty(Ctx)));
}

TEST_CASE("parameter names come from the IR, then the debug info",
          "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
define void @k(ptr %named, i32 %0, double %1) !dbg !5 {
    #dbg_value(i32 %0, !9, !DIExpression(), !11)
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "k.c", directory: "/")
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !8)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !{!10}
!9 = !DILocalVariable(name: "count", arg: 2, scope: !5, file: !1, line: 1, type: !12)
!10 = !DILocalVariable(name: "step", arg: 3, scope: !5, file: !1, line: 1, type: !13)
!11 = !DILocation(line: 1, scope: !5)
!12 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!13 = !DIBasicType(name: "double", size: 64, encoding: DW_ATE_float)
)");
  const Function &F = *M->getFunction("k");
  CHECK(parameterName(F, 0) == "named");
  CHECK(parameterName(F, 1) == "count"); // from a debug record
  CHECK(parameterName(F, 2) == "step");  // from the retained nodes
  LLVMContext Ctx2;
  auto Bare = parse(Ctx2, "define void @k(i32 %0) {\n  ret void\n}\n");
  CHECK(parameterName(*Bare->getFunction("k"), 0) == "arg1");
  // The extracted module keeps the debug info and passes the verifier.
  ExtractedKernel X = extract(*M, "k");
  CHECK(X.Module->getFunction("k")->getSubprogram());
}

TEST_CASE("aliases are followed, top-level asm is dropped", "[extract]") {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
module asm ".globl app_symbol"
define internal void @ctor_base(ptr %this) {
  store i32 1, ptr %this
  ret void
}
@ctor_complete = internal alias void (ptr), ptr @ctor_base
define void @kernel(ptr %p) {
  call void @ctor_complete(ptr %p)
  ret void
}
)");
  ExtractedKernel X = extract(*M, "kernel");
  Module &E = *X.Module;
  GlobalAlias *A = E.getNamedAlias("ctor_complete");
  REQUIRE(A);
  CHECK(A->hasInternalLinkage());
  Function *Base = E.getFunction("ctor_base");
  REQUIRE(Base);
  CHECK_FALSE(Base->isDeclaration());
  CHECK(A->getAliasee() == Base);
  CHECK(E.getModuleInlineAsm().empty());
}
