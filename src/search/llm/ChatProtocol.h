// The parts of the chat client that need no transport: the JSON of the
// chat-completion API that OpenAI defined and vLLM, llama.cpp, Ollama and
// SGLang serve (the request body, the completion in a 200 reply, the
// explanation in an error reply), which statuses are worth a retry, the
// backoff's bound, and the checks of the options. ChatClient.cpp moves the
// bytes with curl.
#pragma once

#include "search/llm/ChatClient.h"

namespace r3::llm {

/// {"model", "messages": [{"role", "content"}], "temperature", "max_tokens"};
/// bytes that are not UTF-8 (prompts quote sources) become U+FFFD.
std::string requestBody(const std::string &Model, const ChatRequest &R,
                        double Temperature, unsigned MaxTokens);

/// What a completion carries.
struct Completion {
  std::string Content;                  ///< choices[0].message.content
  uint64_t TokensIn = 0, TokensOut = 0; ///< usage; 0 when absent
};

/// The completion in Body, or why Body is not one ("invalid JSON: ...", "no
/// choices", ...).
Expected<Completion> parseCompletion(const std::string &Body);

/// The server's own words in an error body (OpenAI's error.message, vLLM's
/// message, FastAPI's detail), cut to 200 bytes; empty when it has none.
std::string serverMessage(const std::string &Body);

/// "Too Many Requests" for 429, and so on; null for an unusual status.
const char *reasonPhrase(long Status);

/// Whether an HTTP status says "try again later" (408, 409, 425, 429, 5xx)
/// rather than "this request is wrong".
bool transientStatus(long Status);

/// The bound of the backoff before retry K (0 for the first retry):
/// min(MaxBackoffSeconds, BackoffSeconds * 2^K).
double backoffBound(const ClientOptions &O, unsigned K);

/// "12.5", "0.05", "120": a number as people write it.
std::string formatNumber(double V);

/// Every mistake in O's models and numbers (the endpoint is the client's to
/// check, with curl's URL parser); empty when there is none.
std::vector<std::string> optionMistakes(const ClientOptions &O);

} // namespace r3::llm
