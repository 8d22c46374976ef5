// The LLM operator (see LlmOperator.h). A child keeps its parent's knobs
// and file and carries the rewritten text, so knob mutations and the inner
// loop's compiler and launch tuning stack on top of a rewrite.
#include "search/llm/LlmOperator.h"

namespace r3::llm {

LlmSession::LlmSession(std::unique_ptr<ChatClient> C, PromptSet P)
    : Client(std::move(C)), Prompts(std::move(P)) {}

uint64_t LlmSession::submit(unsigned Owner, std::vector<ChatMessage> Messages) {
  uint64_t Tag = NextTag;
  if (!Client->submit({Tag, std::move(Messages)}))
    return 0;
  ++NextTag;
  Owners[Tag] = Owner;
  return Tag;
}

std::string LlmSession::unavailable() const {
  if (!Client->budgetLeft())
    return "the LLM budget is spent";
  if (FailuresInARow >= MaxFailuresInARow)
    return "the LLM endpoint failed " + std::to_string(FailuresInARow) +
           " calls in a row; no more calls in this run";
  if (UnproductiveInARow >= MaxUnproductiveInARow)
    return std::to_string(UnproductiveInARow) +
           " calls in a row made no usable kernel; no more calls in this run";
  return "";
}

void LlmSession::count(const std::string &Outcome) {
  if (Outcome == "cancelled")
    return;
  bool Replied = Outcome == "ok" || Outcome == "llm_invalid";
  FailuresInARow = Replied ? 0 : FailuresInARow + 1;
  UnproductiveInARow = Outcome == "ok" ? 0 : UnproductiveInARow + 1;
}

std::vector<ChatResult> LlmSession::take(unsigned Owner) {
  for (ChatResult &R : Client->take()) {
    auto It = Owners.find(R.Tag);
    if (It == Owners.end())
      continue;
    Ready[It->second].push_back(std::move(R));
    Owners.erase(It);
  }
  return std::exchange(Ready[Owner], {});
}

LlmOperator::LlmOperator(LlmSession &S, unsigned Owner, LlmContext &Ctx)
    : Session(S), Owner(Owner), Ctx(Ctx) {}

void LlmOperator::submit(const search::MutationRequest &Req, search::Rng &) {
  Declined.clear();
  if (Req.Parents.empty() || !Req.Parents.front()) {
    Declined = "no parent";
    return;
  }
  const search::Elite &Parent = *Req.Parents.front();
  if (std::string Why = Session.unavailable(); !Why.empty()) {
    Declined = std::move(Why);
    return;
  }
  Expected<ParentFacts> Facts = Ctx.describe(Parent);
  if (!Facts) {
    Declined = Facts.error().message();
    return;
  }
  const PromptSet &P = Session.prompts();
  std::vector<ChatMessage> Messages = {
      {"system", P.System.render(Facts->Values)},
      {"user", P.User.render(Facts->Values)}};
  std::string Prompt = Messages[0].Content + "\n\n" + Messages[1].Content;
  uint64_t Tag = Session.submit(Owner, std::move(Messages));
  if (!Tag) {
    Declined = "the LLM budget is spent";
    return;
  }
  Pending[Tag] = {Parent.Genome, Parent.Id, Req.Island, std::move(Prompt),
                  std::move(Facts->Rules)};
}

std::vector<search::Offspring> LlmOperator::collect() {
  std::vector<search::Offspring> Out;
  for (ChatResult &R : Session.take(Owner)) {
    auto It = Pending.find(R.Tag);
    if (It == Pending.end())
      continue;
    PendingCall P = std::move(It->second);
    Pending.erase(It);
    LlmCall Call;
    Call.Tag = R.Tag;
    Call.ParentVariant = P.ParentId;
    Call.Prompt = std::move(P.Prompt);
    Call.Outcome = callOutcomeName(R.Outcome);
    Call.Reason = R.Error;
    if (R.Outcome == CallOutcome::Ok) {
      Expected<ParsedReply> Reply = parseReply(R.Content, P.Rules);
      if (!Reply) {
        Call.Outcome = "llm_invalid";
        Call.Reason = Reply.error().message();
      } else {
        search::Offspring Kid;
        Kid.Genome = std::move(P.Parent);
        Kid.Genome.Text = std::move(Reply->Source);
        Kid.Parents = {P.ParentId};
        Kid.Operator = "llm";
        Kid.Island = P.Island;
        Kid.Tag = R.Tag;
        Out.push_back(std::move(Kid));
      }
    }
    Session.count(Call.Outcome);
    Call.Result = std::move(R);
    Calls.push_back(std::move(Call));
  }
  return Out;
}

} // namespace r3::llm
