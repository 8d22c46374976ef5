// The LLM chat client against a real server: tests/tools/llm-test-server.py,
// started per test with a script of replies (completions, error statuses with
// Retry-After, slow, truncated and dropped replies), whose log says what
// arrived when. Timing claims are checked on the server's clock (arrival and
// reply times) rather than on the test's wall time. The transport-free parts
// (ChatProtocol) are tested without a server.
#include "Catch.h"

#include "search/llm/ChatClient.h"
#include "search/llm/ChatProtocol.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace r3::llm;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string Key = "sk-r3-test-7f3a9c21";

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

void sleepSeconds(double S) {
  std::this_thread::sleep_for(std::chrono::duration<double>(S));
}

/// The test server on a script, in a folder of its own; killed at the end.
class TestServer {
public:
  explicit TestServer(const std::string &Script,
                      const std::string &ExpectKey = "") {
    static int Count = 0;
    Dir = fs::temp_directory_path() / ("r3-llm-" + std::to_string(::getpid()) +
                                       "-" + std::to_string(++Count));
    fs::remove_all(Dir);
    fs::create_directories(Dir);
    std::ofstream(Dir / "script.json") << json::parse(Script).dump(2);
    std::string Error = start(ExpectKey);
    if (!Error.empty()) {
      stop();
      FAIL(Error);
    }
  }
  ~TestServer() {
    stop();
    fs::remove_all(Dir);
  }

  std::string endpoint() const {
    return "http://127.0.0.1:" + std::to_string(Port) + "/v1";
  }

  /// The log's entries, once at least N are there (the server writes a line
  /// after its reply has left, so the client may be quicker).
  std::vector<json> log(size_t N) const {
    std::vector<json> Entries;
    for (int Try = 0; Try < 500; ++Try) {
      Entries.clear();
      std::ifstream In(Dir / "log.jsonl");
      for (std::string Line; std::getline(In, Line);)
        Entries.push_back(json::parse(Line));
      if (Entries.size() >= N)
        break;
      sleepSeconds(0.01);
    }
    REQUIRE(Entries.size() >= N);
    return Entries;
  }

  std::string logText() const {
    std::ifstream In(Dir / "log.jsonl");
    std::stringstream S;
    S << In.rdbuf();
    return S.str();
  }

private:
  std::string start(const std::string &ExpectKey) {
    std::vector<std::string> Args = {
        R3_PYTHON,     R3_LLM_TEST_SERVER,
        "--script",    (Dir / "script.json").string(),
        "--port-file", (Dir / "port").string(),
        "--log",       (Dir / "log.jsonl").string()};
    if (!ExpectKey.empty())
      Args.insert(Args.end(), {"--expect-key", ExpectKey});
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(A.data());
    Argv.push_back(nullptr);
    Pid = ::fork();
    if (Pid == 0) {
      ::execv(Argv[0], Argv.data());
      ::_exit(127);
    }
    return waitForPort();
  }

  std::string waitForPort() {
    for (int Try = 0; Try < 1000; ++Try) {
      std::ifstream In(Dir / "port");
      if (In >> Port)
        return "";
      int Status = 0;
      if (::waitpid(Pid, &Status, WNOHANG) == Pid) {
        Pid = -1;
        return "the test server exited before it listened";
      }
      sleepSeconds(0.01);
    }
    return "the test server did not write its port within 10 s";
  }

  void stop() {
    if (Pid <= 0)
      return;
    ::kill(Pid, SIGTERM);
    ::waitpid(Pid, nullptr, 0);
    Pid = -1;
  }

  fs::path Dir;
  pid_t Pid = -1;
  int Port = 0;
};

ClientOptions optionsFor(const std::string &Endpoint) {
  ClientOptions O;
  O.Endpoint = Endpoint;
  O.Models = {{"test-model", 1}};
  O.TimeoutSeconds = 5;
  O.Retries = 3;
  O.BackoffSeconds = 0.05;
  O.MaxBackoffSeconds = 0.2;
  return O;
}

std::unique_ptr<ChatClient> makeClient(const ClientOptions &O) {
  auto C = ChatClient::create(O);
  if (!C)
    FAIL(C.error().message());
  return std::move(*C);
}

std::string createError(const ClientOptions &O) {
  auto C = ChatClient::create(O);
  REQUIRE_FALSE(C);
  return C.error().message();
}

ChatRequest request(uint64_t Tag) {
  ChatRequest R;
  R.Tag = Tag;
  R.Messages = {{"system", "You write CUDA kernels."},
                {"user", "Make this kernel faster."}};
  return R;
}

/// N results, by tag, waiting up to 30 s.
std::vector<ChatResult> collect(ChatClient &C, size_t N) {
  std::vector<ChatResult> All;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (All.size() < N && std::chrono::steady_clock::now() < Deadline)
    for (ChatResult &R : C.wait(100))
      All.push_back(std::move(R));
  REQUIRE(All.size() == N);
  std::sort(
      All.begin(), All.end(),
      [](const ChatResult &A, const ChatResult &B) { return A.Tag < B.Tag; });
  return All;
}

ChatResult callOnce(ChatClient &C, uint64_t Tag = 1) {
  REQUIRE(C.submit(request(Tag)));
  ChatResult R = collect(C, 1)[0];
  INFO(R.Error);
  return R;
}

/// The most requests the server held at once, from its arrival and reply
/// times.
int maxOverlap(const std::vector<json> &Log) {
  std::vector<std::pair<double, int>> Events;
  for (const json &E : Log) {
    Events.push_back({E["arrived"].get<double>(), +1});
    Events.push_back({E["replied"].get<double>(), -1});
  }
  std::sort(Events.begin(), Events.end()); // a reply before a same-time arrival
  int Now = 0, Most = 0;
  for (auto &[Time, Step] : Events)
    Most = std::max(Most, Now += Step);
  return Most;
}

/// A port on 127.0.0.1 where nothing listens: bound, then closed.
int closedPort() {
  int S = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in A = {};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof A;
  REQUIRE(::bind(S, reinterpret_cast<sockaddr *>(&A), sizeof A) == 0);
  REQUIRE(::getsockname(S, reinterpret_cast<sockaddr *>(&A), &Len) == 0);
  ::close(S);
  return ntohs(A.sin_port);
}

std::string httpDate(std::time_t T) {
  char Buffer[64];
  std::tm Tm;
  ::gmtime_r(&T, &Tm);
  std::strftime(Buffer, sizeof Buffer, "%a, %d %b %Y %H:%M:%S GMT", &Tm);
  return Buffer;
}

} // namespace

// --- completions ---

TEST_CASE("llm: a completion brings its content, model and token usage",
          "[llm]") {
  TestServer S(R"({"replies": [{"content": "__global__ void k() {}",
                                 "prompt_tokens": 11,
                                 "completion_tokens": 22}]})");
  auto C = makeClient(optionsFor(S.endpoint() + "/")); // the slash is ignored
  ChatResult R = callOnce(*C, 7);
  CHECK(R.Outcome == CallOutcome::Ok);
  CHECK(R.Tag == 7);
  CHECK(R.Content == "__global__ void k() {}");
  CHECK(R.Model == "test-model");
  CHECK(R.TokensIn == 11);
  CHECK(R.TokensOut == 22);
  CHECK(R.Attempts == 1);
  CHECK(R.HttpStatus == 200);
  CHECK(R.Error.empty());
  CHECK(R.LatencyMs > 0);
  CHECK(R.Started <= R.Finished);
  CHECK(C->tokensUsed() == 33);
  CHECK(C->callsMade() == 1);
  CHECK(C->inFlight() == 0);
  json E = S.log(1)[0];
  CHECK(E["request"] == "7");
  CHECK(E["attempt"] == 1);
  CHECK(E["model"] == "test-model");
  CHECK(E["messages"] == 2);
  CHECK(E["prompt_chars"] == 47);
  CHECK(E["auth"] == "missing"); // no key, no Authorization header
}

TEST_CASE("llm: a key that occurs in its own replacement is redacted once",
          "[llm]") {
  // "k" is in "[api key]": the redaction must go on past each replacement
  // rather than find its own mark again (it once looped for ever).
  json Script = json::parse(R"({"replies": [{"content": "keep kk"}]})");
  TestServer S(Script.dump(), "k");
  ClientOptions O = optionsFor(S.endpoint());
  O.ApiKey = "k";
  O.Retries = 0;
  auto C = makeClient(O);
  ChatResult R = callOnce(*C, 1);
  CHECK(R.Outcome == CallOutcome::Ok);
  CHECK(R.Content == "[api key]eep [api key][api key]");
}

TEST_CASE("llm: the API key reaches the server and no result", "[llm]") {
  json Script = json::parse(R"({"replies": [{"content": ""}, {"status": 401},
                                          {"truncate": true, "content": ""}],
                              "default": {"content": "ok"}})");
  // Two replies quote the key, as a careless server might.
  Script["replies"][0]["content"] = "fine, " + Key;
  Script["replies"][1]["message"] = "key " + Key + " refused";
  TestServer S(Script.dump(), Key);
  ClientOptions O = optionsFor(S.endpoint());
  O.ApiKey = Key;
  O.Retries = 0;
  auto C = makeClient(O);
  std::vector<ChatResult> Rs;
  for (uint64_t Tag = 1; Tag <= 3; ++Tag)
    Rs.push_back(callOnce(*C, Tag));
  CHECK(Rs[0].Outcome == CallOutcome::Ok);
  CHECK(Rs[0].Content == "fine, [api key]");
  CHECK(Rs[1].Outcome == CallOutcome::HttpError);
  CHECK(Rs[1].Error == "HTTP 401 (Unauthorized): key [api key] refused");
  CHECK(Rs[2].Outcome == CallOutcome::BadResponse);
  for (const ChatResult &R : Rs) {
    CHECK_FALSE(contains(R.Content, Key));
    CHECK_FALSE(contains(R.Error, Key));
    CHECK_FALSE(contains(R.Model, Key));
  }
  O.ApiKey = "sk-another";
  callOnce(*makeClient(O));
  std::vector<json> Log = S.log(4);
  for (int I = 0; I < 3; ++I)
    CHECK(Log[I]["auth"] == "ok");
  CHECK(Log[3]["auth"] == "wrong");
  CHECK_FALSE(contains(S.logText(), Key));
}

TEST_CASE("llm: at most Concurrency requests are in flight", "[llm]") {
  for (unsigned Concurrency : {4u, 2u, 1u}) {
    INFO("concurrency " << Concurrency);
    TestServer S(R"({"default": {"content": "slow", "delay": 0.5}})");
    ClientOptions O = optionsFor(S.endpoint());
    O.Concurrency = Concurrency;
    auto C = makeClient(O);
    for (uint64_t Tag = 1; Tag <= 4; ++Tag)
      REQUIRE(C->submit(request(Tag)));
    CHECK(C->inFlight() == 4);
    for (const ChatResult &R : collect(*C, 4))
      CHECK(R.Outcome == CallOutcome::Ok);
    CHECK(maxOverlap(S.log(4)) == int(Concurrency));
  }
}

// --- retries ---

TEST_CASE("llm: a 429 is retried no sooner than its Retry-After", "[llm]") {
  TestServer S(R"({"replies": [{"status": 429, "retry_after": 2},
                               {"content": "at last"}]})");
  auto C = makeClient(optionsFor(S.endpoint()));
  ChatResult R = callOnce(*C, 3);
  CHECK(R.Outcome == CallOutcome::Ok);
  CHECK(R.Content == "at last");
  CHECK(R.Attempts == 2);
  std::vector<json> Log = S.log(2);
  CHECK(Log[1]["arrived"].get<double>() - Log[0]["replied"].get<double>() >=
        2.0);
  CHECK(Log[0]["attempt"] == 1);
  CHECK(Log[1]["attempt"] == 2);
  CHECK(Log[1]["request"] == "3");
}

TEST_CASE("llm: a Retry-After can be an HTTP date", "[llm]") {
  std::time_t Now = std::time(nullptr);
  json Script =
      json::parse(R"({"replies": [{"status": 503}, {"content": "at last"}]})");
  Script["replies"][0]["retry_after"] = httpDate(Now + 3);
  TestServer S(Script.dump());
  auto C = makeClient(optionsFor(S.endpoint()));
  ChatResult R = callOnce(*C);
  CHECK(R.Outcome == CallOutcome::Ok);
  std::vector<json> Log = S.log(2);
  // The date has whole seconds: at least 2 of the 3 are left at the 503.
  CHECK(Log[1]["arrived"].get<double>() - Log[0]["replied"].get<double>() >=
        1.9);
}

TEST_CASE("llm: a 500 is retried and, when every attempt fails, is the "
          "result",
          "[llm]") {
  SECTION("then a completion") {
    TestServer S(R"({"replies": [{"status": 500}, {"content": "ok"}]})");
    auto C = makeClient(optionsFor(S.endpoint()));
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::Ok);
    CHECK(R.Attempts == 2);
    CHECK(R.HttpStatus == 200);
  }
  SECTION("always") {
    TestServer S(R"({"default": {"status": 500}})");
    ClientOptions O = optionsFor(S.endpoint());
    O.Retries = 2;
    auto C = makeClient(O);
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::HttpError);
    CHECK(R.Attempts == 3);
    CHECK(R.HttpStatus == 500);
    CHECK(R.Error ==
          "HTTP 500 (Internal Server Error) after 3 attempts: scripted "
          "status 500");
    CHECK(R.Content.empty());
    std::vector<json> Log = S.log(3);
    CHECK(Log.size() == 3);
    CHECK(Log[2]["attempt"] == 3);
  }
}

TEST_CASE("llm: a 404 is not retried", "[llm]") {
  TestServer S(R"({"default": {"status": 404, "message": "no such model"}})");
  auto C = makeClient(optionsFor(S.endpoint()));
  ChatResult R = callOnce(*C);
  CHECK(R.Outcome == CallOutcome::HttpError);
  CHECK(R.Attempts == 1);
  CHECK(R.Error == "HTTP 404 (Not Found): no such model");
  CHECK(S.log(1).size() == 1);
}

TEST_CASE("llm: a reply slower than the timeout is retried", "[llm]") {
  SECTION("then a quick one") {
    // Windows far apart (1 s against 30 s), so that a loaded machine
    // cannot make the quick reply late or the slow one early.
    TestServer S(R"({"replies": [{"content": "slow", "delay": 30},
                                 {"content": "quick"}]})");
    ClientOptions O = optionsFor(S.endpoint());
    O.TimeoutSeconds = 1;
    auto C = makeClient(O);
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::Ok);
    CHECK(R.Content == "quick");
    CHECK(R.Attempts == 2);
  }
  SECTION("always") {
    TestServer S(R"({"default": {"content": "slow", "delay": 30}})");
    ClientOptions O = optionsFor(S.endpoint());
    O.TimeoutSeconds = 1;
    O.Retries = 2;
    auto C = makeClient(O);
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::Timeout);
    CHECK(R.Attempts == 3);
    CHECK_FALSE(R.HttpStatus);
    CHECK(R.Error == "timed out after 1 s (3 attempts)");
  }
}

TEST_CASE("llm: a truncated reply is retried, and only truncated ones are a "
          "bad response",
          "[llm]") {
  SECTION("then a whole one") {
    TestServer S(R"({"replies": [{"content": "cut", "truncate": true},
                                 {"content": "whole"}]})");
    auto C = makeClient(optionsFor(S.endpoint()));
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::Ok);
    CHECK(R.Content == "whole");
    CHECK(R.Attempts == 2);
  }
  SECTION("always") {
    TestServer S(R"({"default": {"content": "cut", "truncate": true}})");
    ClientOptions O = optionsFor(S.endpoint());
    O.Retries = 1;
    auto C = makeClient(O);
    ChatResult R = callOnce(*C);
    CHECK(R.Outcome == CallOutcome::BadResponse);
    CHECK(R.Attempts == 2);
    CHECK(R.HttpStatus == 200);
    CHECK(R.Error.starts_with(
        "the reply is not a chat completion: invalid JSON: "));
    CHECK(R.Error.ends_with(" (2 attempts)"));
  }
}

TEST_CASE("llm: a dropped connection is retried", "[llm]") {
  TestServer S(
      R"({"replies": [{"drop": true}, {"content": "after the drop"}]})");
  auto C = makeClient(optionsFor(S.endpoint()));
  ChatResult R = callOnce(*C);
  CHECK(R.Outcome == CallOutcome::Ok);
  CHECK(R.Content == "after the drop");
  CHECK(R.Attempts == 2);
  CHECK(S.log(2)[0]["kind"] == "drop");
}

TEST_CASE("llm: nothing listening is an HTTP error saying so", "[llm]") {
  int Port = closedPort();
  ClientOptions O = optionsFor("http://127.0.0.1:" + std::to_string(Port));
  O.Retries = 1;
  auto C = makeClient(O);
  ChatResult R = callOnce(*C);
  CHECK(R.Outcome == CallOutcome::HttpError);
  CHECK(R.Attempts == 2);
  CHECK_FALSE(R.HttpStatus);
  CHECK(R.Error.starts_with(
      "cannot connect to 127.0.0.1:" + std::to_string(Port) + ": "));
  CHECK(R.Error.ends_with(" (2 attempts)"));
}

// --- budget, models, cancellation ---

TEST_CASE("llm: the budget refuses calls past MaxCalls", "[llm]") {
  TestServer S(R"({"default": {"content": "ok"}})");
  ClientOptions O = optionsFor(S.endpoint());
  O.MaxCalls = 2;
  auto C = makeClient(O);
  CHECK(C->submit(request(1)));
  CHECK(C->submit(request(2)));
  CHECK_FALSE(C->budgetLeft());
  CHECK_FALSE(C->submit(request(3)));
  CHECK(C->callsMade() == 2);
  CHECK(collect(*C, 2).size() == 2);
  CHECK(C->inFlight() == 0);

  O.MaxCalls = 5;
  auto Resumed = makeClient(O);
  Resumed->charge(5, 0); // an earlier run spent them
  CHECK_FALSE(Resumed->submit(request(1)));
}

TEST_CASE("llm: the budget refuses calls once the tokens are spent", "[llm]") {
  TestServer S(R"({"default": {"content": "ok", "prompt_tokens": 10,
                               "completion_tokens": 20}})");
  ClientOptions O = optionsFor(S.endpoint());
  O.MaxTotalTokens = 50;
  auto C = makeClient(O);
  callOnce(*C, 1);
  CHECK(C->tokensUsed() == 30);
  CHECK(C->budgetLeft());
  callOnce(*C, 2);
  CHECK(C->tokensUsed() == 60);
  CHECK_FALSE(C->budgetLeft());
  CHECK_FALSE(C->submit(request(3)));
  CHECK(C->callsMade() == 2);
}

TEST_CASE("llm: models are drawn by weight, reproducibly", "[llm]") {
  TestServer S(R"({"default": {"content": "ok"}})");
  auto Models = [&](std::vector<ModelChoice> Choices, uint64_t Seed) {
    ClientOptions O = optionsFor(S.endpoint());
    O.Models = std::move(Choices);
    O.Seed = Seed;
    O.Concurrency = 4;
    auto C = makeClient(O);
    for (uint64_t Tag = 1; Tag <= 20; ++Tag)
      REQUIRE(C->submit(request(Tag)));
    std::vector<std::string> Drawn;
    for (const ChatResult &R : collect(*C, 20))
      Drawn.push_back(R.Model);
    return Drawn;
  };
  std::vector<std::string> OnlyA = Models({{"a", 1}, {"b", 0}}, 1);
  CHECK(std::count(OnlyA.begin(), OnlyA.end(), "a") == 20);
  for (const json &E : S.log(20))
    CHECK(E["model"] == "a"); // the drawn model is the one requested

  std::vector<std::string> Both = Models({{"a", 1}, {"b", 1}}, 7);
  CHECK(std::count(Both.begin(), Both.end(), "a") > 0);
  CHECK(std::count(Both.begin(), Both.end(), "b") > 0);
  CHECK(Models({{"a", 1}, {"b", 1}}, 7) == Both);
}

TEST_CASE("llm: cancelAll ends every call at once", "[llm]") {
  // Two calls reach the server and hang there; two wait for a slot.
  TestServer S(R"({"replies": [{"content": "late", "delay": 60},
                               {"content": "late", "delay": 60}],
                   "default": {"content": "after the cancellation"}})");
  ClientOptions O = optionsFor(S.endpoint());
  O.Concurrency = 2;
  auto C = makeClient(O);
  for (uint64_t Tag = 1; Tag <= 4; ++Tag)
    REQUIRE(C->submit(request(Tag)));
  sleepSeconds(0.3);
  auto T0 = std::chrono::steady_clock::now();
  C->cancelAll();
  std::vector<ChatResult> Rs = C->take();
  // Long before the replies would come (60 s), however loaded the machine.
  CHECK(std::chrono::steady_clock::now() - T0 < std::chrono::seconds(20));
  REQUIRE(Rs.size() == 4);
  for (const ChatResult &R : Rs) {
    CHECK(R.Outcome == CallOutcome::Cancelled);
    CHECK(R.Error == "cancelled");
  }
  CHECK(C->inFlight() == 0);
  // The client goes on after a cancellation.
  ChatResult R = callOnce(*C, 5);
  CHECK(R.Outcome == CallOutcome::Ok);
  CHECK(R.Content == "after the cancellation");
}

TEST_CASE("llm: destroying the client does not wait for slow replies",
          "[llm]") {
  TestServer S(R"({"default": {"content": "late", "delay": 60}})");
  auto C = makeClient(optionsFor(S.endpoint()));
  REQUIRE(C->submit(request(1)));
  REQUIRE(C->submit(request(2)));
  sleepSeconds(0.3);
  auto T0 = std::chrono::steady_clock::now();
  C.reset();
  // Long before the replies would come (60 s), however loaded the machine.
  CHECK(std::chrono::steady_clock::now() - T0 < std::chrono::seconds(20));
}

// --- options ---

TEST_CASE("llm: create() refuses bad options, all mistakes at once", "[llm]") {
  ClientOptions O = optionsFor("http://127.0.0.1:8000/v1");
  ClientOptions Empty = O;
  Empty.Endpoint = "";
  CHECK(contains(createError(Empty), "the endpoint is empty; expected a URL"));
  ClientOptions Ftp = O;
  Ftp.Endpoint = "ftp://127.0.0.1/v1";
  CHECK(contains(createError(Ftp), "the endpoint 'ftp://127.0.0.1/v1' has "
                                   "the scheme 'ftp'; expected http or https"));
  ClientOptions Broken = O;
  Broken.Endpoint = "http://[::1/v1";
  CHECK(contains(createError(Broken), "the endpoint 'http://[::1/v1' is not "
                                      "a URL: "));
  ClientOptions NoModels = O;
  NoModels.Models.clear();
  CHECK(contains(createError(NoModels), "no models"));
  ClientOptions Negative = O;
  Negative.Models = {{"a", 1}, {"b", -1}};
  CHECK(contains(createError(Negative), "model 'b' has the weight -1; "
                                        "expected a positive number"));
  ClientOptions Zero = O;
  Zero.Models = {{"a", 0}};
  CHECK(contains(createError(Zero), "no model has a positive weight"));
  ClientOptions Numbers = O;
  Numbers.Concurrency = 0;
  Numbers.TimeoutSeconds = -1;
  std::string E = createError(Numbers);
  CHECK(contains(E, "the concurrency is 0; expected at least 1"));
  CHECK(contains(E, "the timeout is -1; expected a positive number"));
  ClientOptions Several = O;
  Several.Endpoint = "";
  Several.Models.clear();
  E = createError(Several);
  CHECK(contains(E, "the endpoint is empty"));
  CHECK(contains(E, "no models"));
}

// --- the protocol, without a server ---

TEST_CASE("llm: completions are parsed strictly where r3 reads them", "[llm]") {
  auto Why = [](const std::string &Body) {
    auto C = parseCompletion(Body);
    REQUIRE_FALSE(C);
    return C.error().message();
  };
  auto C = parseCompletion(
      R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3}})");
  REQUIRE(C);
  CHECK(C->Content == "x");
  CHECK(C->TokensIn == 3);
  CHECK(C->TokensOut == 0);
  CHECK(Why("{\"choices\": [").starts_with("invalid JSON: "));
  CHECK(Why("[]") == "no choices");
  CHECK(Why(R"({"choices":[]})") == "no choices");
  CHECK(Why(R"({"choices":[{}]})") == "choices[0] has no message");
  CHECK(Why(R"({"choices":[{"message":{"content":null}}]})") ==
        "choices[0].message.content is not a string");
}

TEST_CASE("llm: error bodies, statuses and backoff bounds", "[llm]") {
  CHECK(serverMessage(R"({"error":{"message":"slow down"}})") == "slow down");
  CHECK(serverMessage(R"({"object":"error","message":"no model"})") ==
        "no model");
  CHECK(serverMessage(R"({"detail":"not found"})") == "not found");
  CHECK(serverMessage("<html>") == "");
  for (long S : {408, 409, 425, 429, 500, 503})
    CHECK(transientStatus(S));
  for (long S : {400, 401, 403, 404, 422})
    CHECK_FALSE(transientStatus(S));
  ClientOptions O;
  O.BackoffSeconds = 0.05;
  O.MaxBackoffSeconds = 0.2;
  CHECK(backoffBound(O, 0) == 0.05);
  CHECK(backoffBound(O, 1) == 0.1);
  CHECK(backoffBound(O, 2) == 0.2);
  CHECK(backoffBound(O, 1000) == 0.2);
}

TEST_CASE("llm: request bodies carry the model, messages and settings",
          "[llm]") {
  ChatRequest R;
  R.Messages = {{"user", std::string("bad byte: \xff")}};
  json J = json::parse(requestBody("m", R, 0.5, 128));
  CHECK(J["model"] == "m");
  CHECK(J["temperature"] == 0.5);
  CHECK(J["max_tokens"] == 128);
  CHECK(J["messages"][0]["role"] == "user");
  CHECK(J["messages"][0]["content"] == "bad byte: \xef\xbf\xbd");
  CHECK(std::string(callOutcomeName(CallOutcome::BadResponse)) ==
        "bad_response");
}
