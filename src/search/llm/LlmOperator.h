// The LLM operator of the outer loop: a child is the parent's source
// rewritten by a model. submit() renders the prompt from what the campaign
// knows about the parent (LlmContext) and queues a call; collect() turns
// finished calls into children, each reply checked as untrusted source
// (Reply.h). Every call, whatever came of it, is kept for the history
// (takeCalls). Calls of all kernels share one client and its budget
// (LlmSession); a request the budget no longer allows is declined, and the
// outer loop makes a random child instead.
#pragma once

#include "search/evolve/Evolution.h"
#include "search/llm/ChatClient.h"
#include "search/llm/Prompt.h"
#include "search/llm/Reply.h"

#include <map>
#include <memory>

namespace r3::llm {

/// The client, the templates, and the routing of results to operators.
class LlmSession {
public:
  LlmSession(std::unique_ptr<ChatClient> C, PromptSet P);
  /// Queues a call for Owner; the call's tag, or 0 when the budget is spent.
  uint64_t submit(unsigned Owner, std::vector<ChatMessage> Messages);
  /// Owner's finished calls.
  std::vector<ChatResult> take(unsigned Owner);
  ChatClient &client() { return *Client; }
  const PromptSet &prompts() const { return Prompts; }
  /// Calls failing in a row (no reply at all, retries spent) after which
  /// the operator stops for this run: an endpoint that is down must not
  /// keep a campaign waiting for ever. A resumed campaign tries again.
  static constexpr unsigned MaxFailuresInARow = 8;
  /// Calls in a row that made no child (failed, or replies rejected) after
  /// which the operator stops: a model that never writes a usable kernel
  /// must not spend an unlimited budget.
  static constexpr unsigned MaxUnproductiveInARow = 32;
  /// Counts a finished call's outcome ("ok", "llm_invalid", a failure).
  void count(const std::string &Outcome);
  /// Why no call should be made now (budget, a dead endpoint, a model that
  /// makes nothing usable), or empty.
  std::string unavailable() const;

private:
  std::unique_ptr<ChatClient> Client;
  PromptSet Prompts;
  std::map<uint64_t, unsigned> Owners;
  std::map<unsigned, std::vector<ChatResult>> Ready;
  uint64_t NextTag = 1;
  unsigned FailuresInARow = 0, UnproductiveInARow = 0;
};

/// What the campaign tells a prompt about a parent, and what its reply is
/// checked against.
struct ParentFacts {
  std::map<std::string, std::string> Values; ///< promptVariables() names
  ReplyRules Rules;
};

class LlmContext {
public:
  virtual ~LlmContext() = default;
  /// The facts of a parent; an error declines the request.
  virtual Expected<ParentFacts> describe(const search::Elite &Parent) = 0;
};

/// One finished call, for the history.
struct LlmCall {
  uint64_t Tag = 0;
  int64_t ParentVariant = 0;
  std::string Prompt; ///< the messages, as sent
  ChatResult Result;
  std::string Outcome; ///< "ok", "llm_invalid", or the client's outcome
  std::string Reason;  ///< why not ok
};

class LlmOperator : public search::MutationOperator {
public:
  LlmOperator(LlmSession &S, unsigned Owner, LlmContext &Ctx);
  std::string_view name() const override { return "llm"; }
  unsigned arity() const override { return 1; }
  void submit(const search::MutationRequest &Req, search::Rng &R) override;
  std::vector<search::Offspring> collect() override;
  unsigned inFlight() const override { return unsigned(Pending.size()); }
  /// The calls finished since the last takeCalls().
  std::vector<LlmCall> takeCalls() { return std::exchange(Calls, {}); }
  /// Why the last request was declined (empty when none was).
  const std::string &lastDecline() const { return Declined; }

private:
  struct PendingCall {
    search::SourceGenome Parent;
    int64_t ParentId = 0;
    unsigned Island = 0;
    std::string Prompt;
    ReplyRules Rules;
  };
  LlmSession &Session;
  unsigned Owner;
  LlmContext &Ctx;
  std::map<uint64_t, PendingCall> Pending;
  std::vector<LlmCall> Calls;
  std::string Declined;
};

} // namespace r3::llm
