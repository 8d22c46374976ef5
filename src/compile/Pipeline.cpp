// Pipelines (Pipeline.h): parsing with LLVM's own error text, and a run with
// the standard analyses registered and cross-wired.
#include "compile/Pipeline.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Target/TargetMachine.h"

#include <cstring>

using namespace llvm;

namespace r3 {

namespace {
r3::Error parsePipeline(PassBuilder &PB, ModulePassManager &MPM,
                        const std::string &Pipeline) {
  if (llvm::Error E =
          PB.parsePassPipeline(MPM, withoutFixpointAborts(Pipeline)))
    return r3::Error::make(toString(std::move(E)))
        .context("pipeline '" + Pipeline + "'");
  return r3::Error::success();
}
} // namespace

r3::Error checkPipeline(const std::string &Pipeline) {
  PassBuilder PB;
  ModulePassManager MPM;
  return parsePipeline(PB, MPM, Pipeline);
}

r3::Error runPassPipeline(Module &M, const std::string &Pipeline,
                          TargetMachine *TM) {
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(TM);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  ModulePassManager MPM;
  R3_TRY(parsePipeline(PB, MPM, Pipeline));
  MPM.run(M, MAM);
  return r3::Error::success();
}

/// A pipeline string's `instcombine` runs with LLVM 19's fixpoint check on,
/// which aborts the whole process ("LLVM ERROR: Instruction Combining did not
/// reach a fixpoint") when one iteration does not finish the job; that is a
/// debugging aid, not a property of the code, and default<On> turns it off.
/// So every instcombine in a user's pipeline gets no-verify-fixpoint unless
/// it names verify-fixpoint itself.
std::string withoutFixpointAborts(const std::string &Pipeline) {
  static const std::string Name = "instcombine";
  std::string Out;
  size_t Pos = 0;
  while (true) {
    size_t At = Pipeline.find(Name, Pos);
    if (At == std::string::npos)
      return Out + Pipeline.substr(Pos);
    size_t End = At + Name.size();
    bool Starts = At == 0 || Pipeline[At - 1] == '(' || Pipeline[At - 1] == ',';
    bool Ends = End == Pipeline.size() || std::strchr(",)<", Pipeline[End]);
    Out += Pipeline.substr(Pos, End - Pos);
    Pos = End;
    if (!Starts || !Ends)
      continue;
    if (End == Pipeline.size() || Pipeline[End] != '<') {
      Out += "<no-verify-fixpoint>";
      continue;
    }
    size_t Close = Pipeline.find('>', End);
    if (Close == std::string::npos)
      continue; // malformed: the parser reports it
    std::string Params = Pipeline.substr(End, Close - End);
    Out += Params;
    if (Params.find("verify-fixpoint") == std::string::npos)
      Out += ";no-verify-fixpoint";
    Pos = Close;
  }
}

std::optional<llvm::CodeGenOptLevel> codegenLevel(int Level) {
  if (Level < 0 || Level > 3)
    return std::nullopt;
  return static_cast<llvm::CodeGenOptLevel>(Level);
}

} // namespace r3
