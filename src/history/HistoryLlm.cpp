// The history's record of the LLM operator: each call with its cost and
// outcome, and the prompts (stored once per hash, so a prompt repeated for
// many calls costs its text once). Schema version 2; a history of version 1
// opened for reading has no calls.
#include "history/History.h"
#include "history/HistorySql.h"

namespace r3 {

using namespace detail;

namespace {
Error readLlmCall(const Statement &S, LlmCallRow &R) {
  R.Id = S.integer(0);
  R.KernelId = S.integer(1);
  R.ParentVariantId = S.optInteger(2);
  R.VariantId = S.optInteger(3);
  R.Model = S.text(4);
  R.PromptHash = S.text(5);
  R.TokensIn = static_cast<uint64_t>(S.integer(6));
  R.TokensOut = static_cast<uint64_t>(S.integer(7));
  R.LatencyMs = S.real(8);
  R.Attempts = static_cast<unsigned>(S.integer(9));
  R.HttpStatus = S.optInteger(10);
  R.Outcome = S.text(11);
  R.Reason = S.text(12);
  R.Reply = S.text(13);
  R.Started = S.real(14);
  R.Finished = S.real(15);
  return Error::success();
}
} // namespace

Error History::putPrompt(const std::string &Hash, const std::string &Text) {
  Statement S(Db, Path, "storing a prompt");
  R3_TRY(S.prepare("INSERT INTO prompts (hash, text) VALUES (?, ?) "
                   "ON CONFLICT (hash) DO NOTHING"));
  return S.bind(Hash, Text).run();
}

Expected<std::optional<std::string>> History::prompt(const std::string &Hash) {
  if (Version < 2)
    return std::optional<std::string>();
  Statement S(Db, Path, "reading a prompt");
  R3_TRY(S.prepare("SELECT text FROM prompts WHERE hash = ?"));
  S.bind(Hash);
  return first<std::string>(S, [](const Statement &S, std::string &T) {
    T = S.text(0);
    return Error::success();
  });
}

Expected<int64_t> History::addLlmCall(const LlmCallRow &C) {
  Statement S(Db, Path, "adding an LLM call");
  R3_TRY(S.prepare(
      "INSERT INTO llm_calls (kernel_id, parent_variant_id, variant_id, "
      "model, prompt_hash, tokens_in, tokens_out, latency_ms, attempts, "
      "http_status, outcome, reason, reply, started, finished) VALUES (?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  R3_TRY(S.bind(C.KernelId, C.ParentVariantId, C.VariantId, C.Model,
                C.PromptHash, C.TokensIn, C.TokensOut, C.LatencyMs, C.Attempts,
                C.HttpStatus, C.Outcome, C.Reason, C.Reply, C.Started,
                C.Finished)
             .run());
  return sqlite3_last_insert_rowid(Db);
}

Expected<std::vector<LlmCallRow>> History::llmCalls(int64_t KernelId) {
  if (Version < 2)
    return std::vector<LlmCallRow>();
  Statement S(Db, Path, "reading the LLM calls");
  R3_TRY(S.prepare(
      "SELECT id, kernel_id, parent_variant_id, variant_id, model, "
      "prompt_hash, tokens_in, tokens_out, latency_ms, attempts, http_status, "
      "outcome, reason, reply, started, finished FROM llm_calls WHERE ?1 = 0 "
      "OR kernel_id = ?1 ORDER BY id"));
  S.bind(KernelId);
  return collect<LlmCallRow>(S, readLlmCall);
}

} // namespace r3
