// A client of OpenAI-compatible chat-completion servers (vLLM, llama.cpp's
// server, Ollama, SGLang, OpenAI): POST {endpoint}/chat/completions with
// libcurl's multi interface on a thread of its own, so that several requests
// are in flight while the campaign's workers evaluate. Each request is one
// call: a model drawn by weight, then attempts until one succeeds or the
// retries are spent; transient failures (no connection, a dropped one, a
// timeout, HTTP 408/409/425/429/5xx, a 200 whose body is not a completion)
// are retried after an exponential backoff with full jitter, and never
// sooner than a Retry-After the server sent. The budget counts calls and
// tokens (prompt + completion, as the server reports them in `usage`).
//
// The API key is the value, handed over by the caller (who read it from the
// environment variable the campaign names); it goes into the Authorization
// header and nowhere else: not into results, errors or logs.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace r3::llm {

/// A model and its share of the calls.
struct ModelChoice {
  std::string Name;
  double Weight = 1;
};

struct ClientOptions {
  /// The base URL ("http://127.0.0.1:8000/v1"); requests go to
  /// Endpoint + "/chat/completions" (a trailing slash is ignored).
  std::string Endpoint;
  std::vector<ModelChoice> Models; ///< at least one
  std::string ApiKey;              ///< empty: no Authorization header
  double Temperature = 0.8;
  unsigned MaxTokens = 4096;   ///< max_tokens of each request
  unsigned Concurrency = 2;    ///< requests in flight at once
  double TimeoutSeconds = 120; ///< per attempt
  unsigned Retries = 3;        ///< attempts after the first
  double BackoffSeconds = 1;   ///< the first backoff's bound; doubles
  double MaxBackoffSeconds = 60;
  uint64_t MaxCalls = 0;       ///< 0: no limit
  uint64_t MaxTotalTokens = 0; ///< prompt + completion; 0: no limit
  uint64_t Seed = 1;           ///< model draws and jitter
};

struct ChatMessage {
  std::string Role; ///< "system", "user", "assistant"
  std::string Content;
};

struct ChatRequest {
  uint64_t Tag = 0; ///< the caller's; comes back in the result
  std::vector<ChatMessage> Messages;
};

enum class CallOutcome {
  Ok,          ///< a completion arrived
  HttpError,   ///< the last attempt got an HTTP error or no connection
  Timeout,     ///< the last attempt timed out
  BadResponse, ///< the last attempt's 200 was not a completion
  Cancelled    ///< cancelAll() or the client's destruction
};
/// "ok", "http_error", "timeout", "bad_response", "cancelled": the names
/// the history stores.
const char *callOutcomeName(CallOutcome O);

struct ChatResult {
  uint64_t Tag = 0;
  CallOutcome Outcome = CallOutcome::Ok;
  std::string Model;   ///< the model drawn for this call
  std::string Content; ///< choices[0].message.content (Ok only)
  uint64_t TokensIn = 0, TokensOut = 0; ///< usage; 0 when not reported
  double LatencyMs = 0;  ///< submit() to the result, waits included
  unsigned Attempts = 0; ///< attempts made (1 when the first succeeded)
  std::optional<long> HttpStatus; ///< of the last attempt, if any
  /// Why a call failed, for people: "HTTP 500 (Internal Server Error) after
  /// 4 attempts", "timed out after 5 s", "the reply is not a chat
  /// completion: ...". Empty when Ok.
  std::string Error;
  double Started = 0, Finished = 0; ///< seconds since the epoch
};

class ChatClient {
public:
  /// Checks the options (an endpoint that curl can parse, http or https, at
  /// least one model with a positive weight) and starts the client's thread.
  static Expected<std::unique_ptr<ChatClient>> create(ClientOptions O);
  /// Cancels what is in flight and joins the thread.
  ~ChatClient();
  ChatClient(const ChatClient &) = delete;
  ChatClient &operator=(const ChatClient &) = delete;

  /// Queues a call; false (and nothing queued) when the budget is spent.
  bool submit(ChatRequest R);
  /// The calls finished since the last take(), without blocking.
  std::vector<ChatResult> take();
  /// Like take(), waiting up to TimeoutMs for at least one result.
  std::vector<ChatResult> wait(int TimeoutMs);
  /// Submitted calls whose results have not been taken.
  unsigned inFlight() const;
  /// Calls submitted and tokens reported, this run plus charge().
  uint64_t callsMade() const;
  uint64_t tokensUsed() const;
  /// Whether submit() would take another call.
  bool budgetLeft() const;
  /// Counts the calls and tokens of an earlier run (a resumed campaign).
  void charge(uint64_t Calls, uint64_t Tokens);
  /// Ends every call in flight or queued: their results come back Cancelled.
  void cancelAll();

  class Impl;

private:
  explicit ChatClient(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace r3::llm
