// The chat client's transport-free parts. Parsing a completion is strict
// about what r3 uses (choices[0].message.content must be a string) and
// lenient about the rest, since servers differ in what else they send.
#include "search/llm/ChatProtocol.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>

namespace r3::llm {

using json = nlohmann::json;

const char *callOutcomeName(CallOutcome O) {
  switch (O) {
  case CallOutcome::Ok:
    return "ok";
  case CallOutcome::HttpError:
    return "http_error";
  case CallOutcome::Timeout:
    return "timeout";
  case CallOutcome::BadResponse:
    return "bad_response";
  case CallOutcome::Cancelled:
    return "cancelled";
  }
  return "unknown";
}

std::string requestBody(const std::string &Model, const ChatRequest &R,
                        double Temperature, unsigned MaxTokens) {
  json Messages = json::array();
  for (const ChatMessage &M : R.Messages)
    Messages.push_back({{"role", M.Role}, {"content", M.Content}});
  json Body = {{"model", Model},
               {"messages", std::move(Messages)},
               {"temperature", Temperature},
               {"max_tokens", MaxTokens}};
  return Body.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

/// The member Name of J when J is an object holding one, else null.
const json *member(const json &J, const char *Name) {
  if (!J.is_object())
    return nullptr;
  auto It = J.find(Name);
  return It == J.end() ? nullptr : &*It;
}

uint64_t usageField(const json *Usage, const char *Name) {
  const json *N = Usage ? member(*Usage, Name) : nullptr;
  return N && N->is_number_unsigned() ? N->get<uint64_t>() : 0;
}

} // namespace

Expected<Completion> parseCompletion(const std::string &Body) {
  json J;
  try {
    J = json::parse(Body);
  } catch (const json::parse_error &E) {
    std::string Why = E.what(); // "[json.exception.parse_error.101] ..."
    return makeError("invalid JSON: ", Why.substr(Why.find("] ") + 2));
  }
  const json *Choices = member(J, "choices");
  if (!Choices || !Choices->is_array() || Choices->empty())
    return makeError("no choices");
  const json *Message = member((*Choices)[0], "message");
  if (!Message)
    return makeError("choices[0] has no message");
  const json *Content = member(*Message, "content");
  if (!Content || !Content->is_string())
    return makeError("choices[0].message.content is not a string");
  const json *Usage = member(J, "usage");
  return Completion{Content->get<std::string>(),
                    usageField(Usage, "prompt_tokens"),
                    usageField(Usage, "completion_tokens")};
}

std::string serverMessage(const std::string &Body) {
  json J = json::parse(Body, nullptr, false);
  const json *M = member(J, "error");
  if (M && M->is_object())
    M = member(*M, "message");
  for (const char *Name : {"message", "detail"})
    if (!M)
      M = member(J, Name);
  if (!M || !M->is_string())
    return "";
  std::string S = M->get<std::string>();
  return S.size() > 200 ? S.substr(0, 200) + "..." : S;
}

const char *reasonPhrase(long Status) {
  static const std::map<long, const char *> Phrases = {
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {408, "Request Timeout"},
      {409, "Conflict"},
      {413, "Payload Too Large"},
      {422, "Unprocessable Entity"},
      {425, "Too Early"},
      {429, "Too Many Requests"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"}};
  auto It = Phrases.find(Status);
  return It == Phrases.end() ? nullptr : It->second;
}

bool transientStatus(long S) {
  return S == 408 || S == 409 || S == 425 || S == 429 || S >= 500;
}

double backoffBound(const ClientOptions &O, unsigned K) {
  return std::min(O.MaxBackoffSeconds,
                  std::ldexp(O.BackoffSeconds, int(std::min(K, 60u))));
}

std::string formatNumber(double V) {
  char Buffer[32];
  std::snprintf(Buffer, sizeof Buffer, "%g", V);
  return Buffer;
}

namespace {

void checkModels(const std::vector<ModelChoice> &Models,
                 std::vector<std::string> &Mistakes) {
  if (Models.empty())
    Mistakes.push_back("no models; expected at least one model name");
  bool AnyPositive = false;
  for (size_t I = 0; I < Models.size(); ++I) {
    const ModelChoice &M = Models[I];
    if (M.Name.empty())
      Mistakes.push_back("model " + std::to_string(I + 1) +
                         " has an empty name");
    // A weight of 0 keeps a model listed but never drawn.
    if (!std::isfinite(M.Weight) || M.Weight < 0)
      Mistakes.push_back("model '" + M.Name + "' has the weight " +
                         formatNumber(M.Weight) +
                         "; expected a positive number (0: never drawn)");
    AnyPositive |= std::isfinite(M.Weight) && M.Weight > 0;
  }
  if (!Models.empty() && !AnyPositive)
    Mistakes.push_back("no model has a positive weight");
}

void checkNumbers(const ClientOptions &O, std::vector<std::string> &Mistakes) {
  auto Check = [&](bool Ok, const std::string &What, double Got,
                   const char *Expected) {
    if (!Ok)
      Mistakes.push_back(What + " is " + formatNumber(Got) + "; expected " +
                         Expected);
  };
  auto NonNegative = [](double V) { return std::isfinite(V) && V >= 0; };
  Check(O.Concurrency > 0, "the concurrency", O.Concurrency, "at least 1");
  Check(O.MaxTokens > 0, "max_tokens", O.MaxTokens, "at least 1");
  Check(NonNegative(O.TimeoutSeconds) && O.TimeoutSeconds > 0, "the timeout",
        O.TimeoutSeconds, "a positive number of seconds");
  Check(NonNegative(O.Temperature), "the temperature", O.Temperature,
        "0 or more");
  Check(NonNegative(O.BackoffSeconds), "the backoff", O.BackoffSeconds,
        "0 or more seconds");
  Check(NonNegative(O.MaxBackoffSeconds), "the maximum backoff",
        O.MaxBackoffSeconds, "0 or more seconds");
}

} // namespace

std::vector<std::string> optionMistakes(const ClientOptions &O) {
  std::vector<std::string> Mistakes;
  checkModels(O.Models, Mistakes);
  checkNumbers(O, Mistakes);
  return Mistakes;
}

} // namespace r3::llm
