// The chat client over libcurl, the only file of r3 that calls curl. One
// background thread owns a curl multi handle and every easy handle; the
// caller's threads only queue calls, take results and ask for cancellation,
// under one mutex, and wake the thread with curl_multi_wakeup. The thread
// loops: take what was submitted, start attempts while fewer than Concurrency
// are in flight and a call's backoff has passed, let curl work, settle the
// finished attempts (a result, or a retry with its not-before time), then
// sleep in curl_multi_poll until a socket, a backoff or a wakeup is due.
//
// Each attempt is a fresh easy handle (connections are still reused through
// the multi handle's pool). Errors keep curl's own text (CURLOPT_ERRORBUFFER,
// else curl_easy_strerror). The API key only ever enters the Authorization
// header list; error texts and contents are scrubbed of it all the same,
// because they hold what the server sent, and results end up in the history
// and in reports.
#include "search/llm/ChatClient.h"
#include "support/Clock.h"

#include "search/llm/ChatProtocol.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <curl/curl.h>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace r3::llm {

namespace {

using Clock = std::chrono::steady_clock;

double epochSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

/// curl_global_init is not thread-safe and must run once per process.
void initCurlOnce() {
  static std::once_flag Once;
  std::call_once(Once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL *E) const { curl_easy_cleanup(E); }
};
struct ListDeleter {
  void operator()(curl_slist *L) const { curl_slist_free_all(L); }
};
struct UrlDeleter {
  void operator()(CURLU *U) const { curl_url_cleanup(U); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using HeaderList = std::unique_ptr<curl_slist, ListDeleter>;

// --- options ---

/// The endpoint's parts that create() checks and error messages name.
struct Endpoint {
  std::string Url;       ///< ".../chat/completions"
  std::string Authority; ///< "127.0.0.1:8000", without user info
};

std::string urlPart(CURLU *U, CURLUPart What, unsigned Flags = 0) {
  char *Part = nullptr;
  curl_url_get(U, What, &Part, Flags);
  std::string S = Part ? Part : "";
  curl_free(Part);
  return S;
}

Expected<Endpoint> parseEndpoint(const std::string &Text) {
  if (Text.empty())
    return makeError("the endpoint is empty; expected a URL such as "
                     "http://127.0.0.1:8000/v1");
  std::unique_ptr<CURLU, UrlDeleter> U(curl_url());
  // Unknown schemes parse so that the scheme check below can name them.
  if (CURLUcode C = curl_url_set(U.get(), CURLUPART_URL, Text.c_str(),
                                 CURLU_NON_SUPPORT_SCHEME))
    return makeError("the endpoint '", Text,
                     "' is not a URL: ", curl_url_strerror(C));
  std::string S = urlPart(U.get(), CURLUPART_SCHEME);
  if (S != "http" && S != "https")
    return makeError("the endpoint '", Text, "' has the scheme '", S,
                     "'; expected http or https");
  std::string Base = Text;
  while (!Base.empty() && Base.back() == '/')
    Base.pop_back();
  // Host and port, never user info: error messages name them.
  return Endpoint{Base + "/chat/completions",
                  urlPart(U.get(), CURLUPART_HOST) + ":" +
                      urlPart(U.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT)};
}

// --- replies ---

/// What one attempt came to.
struct AttemptResult {
  CallOutcome Outcome = CallOutcome::Ok;
  bool Retryable = false;
  std::optional<long> Status;
  std::string Error;  ///< what happened, before the attempt count
  std::string Detail; ///< the server's explanation, after it
  double RetryAfter = 0;
  std::string Content;
  uint64_t TokensIn = 0, TokensOut = 0;
};

/// Seconds to wait from a Retry-After value: delta-seconds or an HTTP-date.
double parseRetryAfter(const char *Value) {
  std::string V = Value;
  if (auto N = parseUnsigned(V))
    return double(*N);
  time_t When = curl_getdate(V.c_str(), nullptr);
  return When < 0 ? 0 : std::max(0.0, std::difftime(When, std::time(nullptr)));
}

double retryAfterOf(CURL *E) {
  curl_header *H = nullptr;
  if (curl_easy_header(E, "Retry-After", 0, CURLH_HEADER, -1, &H) != CURLHE_OK)
    return 0;
  return parseRetryAfter(H->value);
}

AttemptResult httpResult(CURL *E, const std::string &Body) {
  AttemptResult R;
  long Status = 0;
  curl_easy_getinfo(E, CURLINFO_RESPONSE_CODE, &Status);
  R.Status = Status;
  if (Status >= 200 && Status < 300) {
    Expected<Completion> C = parseCompletion(Body);
    if (!C) {
      R.Outcome = CallOutcome::BadResponse;
      R.Retryable = true;
      R.Error = "the reply is not a chat completion: " + C.error().message();
      return R;
    }
    R.Content = std::move(C->Content);
    R.TokensIn = C->TokensIn;
    R.TokensOut = C->TokensOut;
    return R;
  }
  R.Outcome = CallOutcome::HttpError;
  R.Retryable = transientStatus(Status);
  R.RetryAfter = retryAfterOf(E);
  const char *Phrase = reasonPhrase(Status);
  R.Error = "HTTP " + std::to_string(Status) +
            (Phrase ? std::string(" (") + Phrase + ")" : "");
  R.Detail = serverMessage(Body);
  return R;
}

/// Failures that another attempt cannot mend: the URL or TLS setup.
bool permanentCurlError(CURLcode C) {
  switch (C) {
  case CURLE_UNSUPPORTED_PROTOCOL:
  case CURLE_URL_MALFORMAT:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_OUT_OF_MEMORY:
    return true;
  default:
    return false;
  }
}

AttemptResult transportResult(CURLcode C, const char *ErrorBuffer,
                              const std::string &Authority,
                              double TimeoutSeconds) {
  AttemptResult R;
  R.Outcome = CallOutcome::HttpError;
  R.Retryable = !permanentCurlError(C);
  std::string Text = *ErrorBuffer ? ErrorBuffer : curl_easy_strerror(C);
  if (C == CURLE_OPERATION_TIMEDOUT) {
    R.Outcome = CallOutcome::Timeout;
    R.Error = "timed out after " + formatNumber(TimeoutSeconds) + " s";
  } else if (C == CURLE_COULDNT_CONNECT || C == CURLE_COULDNT_RESOLVE_HOST) {
    R.Error = "cannot connect to " + Authority + ": " + Text;
  } else {
    R.Error = "no reply from " + Authority + ": " + Text;
  }
  return R;
}

size_t appendReply(char *Data, size_t Size, size_t Count, void *Reply) {
  static_cast<std::string *>(Reply)->append(Data, Size * Count);
  return Size * Count;
}

/// "HTTP 500 (Internal Server Error) after 4 attempts: the server's words",
/// "timed out after 5 s (4 attempts)".
std::string describe(const AttemptResult &R, unsigned Attempts) {
  std::string S = R.Error;
  std::string Count = std::to_string(Attempts) + " attempts";
  if (Attempts > 1)
    S += R.Outcome == CallOutcome::HttpError && R.Status ? " after " + Count
                                                         : " (" + Count + ")";
  if (!R.Detail.empty())
    S += ": " + R.Detail;
  return S;
}

/// One call: its model and body stay fixed across its attempts.
struct Call {
  uint64_t Tag = 0;
  std::string Model, Body;
  Clock::time_point Submitted, NotBefore;
  double Started = 0;
  unsigned Attempts = 0;
};

/// One attempt in flight: the easy handle and what it needs to stay alive.
struct Attempt {
  std::unique_ptr<Call> C;
  HeaderList Headers; // freed after the handle that uses it
  EasyHandle Easy;
  std::string Reply;
  char ErrorBuffer[CURL_ERROR_SIZE] = {};
};

} // namespace

// --- the client ---

class ChatClient::Impl {
public:
  Impl(ClientOptions O, Endpoint E, CURLM *M)
      : Opts(std::move(O)), Target(std::move(E)), Multi(M), ModelRng(Opts.Seed),
        JitterRng(Opts.Seed ^ 0x9e3779b97f4a7c15ULL) {
    std::vector<double> Weights;
    for (const ModelChoice &C : Opts.Models)
      Weights.push_back(C.Weight);
    Draw = std::discrete_distribution<size_t>(Weights.begin(), Weights.end());
    Worker = std::thread([this] { run(); });
  }
  ~Impl();

  bool submit(ChatRequest R);
  std::vector<ChatResult> take(std::unique_lock<std::mutex> &L);
  std::vector<ChatResult> wait(int TimeoutMs);
  void cancelAll();
  /// F's value, computed under Lock.
  template <typename F> auto locked(F Fn) const {
    std::lock_guard<std::mutex> G(Lock);
    return Fn();
  }
  bool budgetLeftLocked() const {
    return (!Opts.MaxCalls || Calls < Opts.MaxCalls) &&
           (!Opts.MaxTotalTokens || Tokens < Opts.MaxTotalTokens);
  }

  // Shared with the caller's threads, under Lock.
  mutable std::mutex Lock;
  std::condition_variable ResultsReady, CancelAcked;
  std::vector<std::unique_ptr<Call>> Submitted;
  std::vector<ChatResult> Results;
  uint64_t Calls = 0, Tokens = 0, CancelsAsked = 0, CancelsDone = 0;
  unsigned Outstanding = 0;
  bool Stopping = false;

private:
  void run();
  bool exchange();
  void startReady();
  void start(std::unique_ptr<Call> C);
  HeaderList headersFor(const Call &C) const;
  void configure(Attempt &A) const;
  void collectFinished();
  void settle(std::unique_ptr<Call> C, AttemptResult R);
  void finish(std::unique_ptr<Call> C, const AttemptResult &R);
  void post(ChatResult R);
  std::vector<ChatResult> cancelHeld();
  int pollTimeoutMs() const;
  ChatResult resultOf(const Call &C, CallOutcome O) const;
  std::string redact(std::string S) const;

  const ClientOptions Opts;
  const Endpoint Target;
  CURLM *const Multi;
  std::mt19937_64 ModelRng;  // under Lock: submit() draws
  std::mt19937_64 JitterRng; // the worker's
  std::discrete_distribution<size_t> Draw;
  // The worker's own: calls waiting to start (new, or backing off), and the
  // attempts in flight by easy handle.
  std::deque<std::unique_ptr<Call>> Waiting;
  std::map<CURL *, std::unique_ptr<Attempt>> Active;
  std::thread Worker;
};

ChatResult ChatClient::Impl::resultOf(const Call &C, CallOutcome O) const {
  ChatResult R;
  R.Tag = C.Tag;
  R.Outcome = O;
  R.Model = C.Model;
  R.Attempts = C.Attempts;
  R.Started = C.Started;
  R.Finished = epochSeconds();
  R.LatencyMs = msSince(C.Submitted);
  return R;
}

std::string ChatClient::Impl::redact(std::string S) const {
  if (Opts.ApiKey.empty())
    return S;
  // The search goes on after each replacement: a key that occurs in the
  // replacement text itself (a one-letter key, say) must not loop.
  static constexpr std::string_view Mark = "[api key]";
  for (size_t At = S.find(Opts.ApiKey); At != std::string::npos;
       At = S.find(Opts.ApiKey, At + Mark.size()))
    S.replace(At, Opts.ApiKey.size(), Mark);
  return S;
}

bool ChatClient::Impl::submit(ChatRequest R) {
  auto C = std::make_unique<Call>();
  C->Tag = R.Tag;
  C->Submitted = C->NotBefore = Clock::now();
  C->Started = epochSeconds();
  {
    std::lock_guard<std::mutex> G(Lock);
    if (!budgetLeftLocked())
      return false;
    ++Calls;
    ++Outstanding;
    C->Model = Opts.Models[Draw(ModelRng)].Name;
    C->Body = requestBody(C->Model, R, Opts.Temperature, Opts.MaxTokens);
    Submitted.push_back(std::move(C));
  }
  curl_multi_wakeup(Multi);
  return true;
}

std::vector<ChatResult> ChatClient::Impl::take(std::unique_lock<std::mutex> &) {
  std::vector<ChatResult> Out;
  Out.swap(Results);
  Outstanding -= unsigned(Out.size());
  return Out;
}

std::vector<ChatResult> ChatClient::Impl::wait(int TimeoutMs) {
  std::unique_lock<std::mutex> L(Lock);
  ResultsReady.wait_for(L, std::chrono::milliseconds(std::max(TimeoutMs, 0)),
                        [&] { return !Results.empty(); });
  return take(L);
}

void ChatClient::Impl::cancelAll() {
  std::unique_lock<std::mutex> L(Lock);
  // Calls the worker has not seen yet end here; the worker ends its own and
  // acknowledges, so that every result is there when cancelAll() returns.
  for (std::unique_ptr<Call> &C : Submitted) {
    ChatResult R = resultOf(*C, CallOutcome::Cancelled);
    R.Error = "cancelled";
    Results.push_back(std::move(R));
  }
  Submitted.clear();
  uint64_t Ticket = ++CancelsAsked;
  curl_multi_wakeup(Multi);
  CancelAcked.wait(L, [&] { return CancelsDone >= Ticket; });
  ResultsReady.notify_all();
}

ChatClient::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> G(Lock);
    Stopping = true;
  }
  curl_multi_wakeup(Multi);
  Worker.join();
  curl_multi_cleanup(Multi);
}

// --- the worker thread ---

void ChatClient::Impl::run() {
  while (exchange()) {
    startReady();
    int Running = 0;
    curl_multi_perform(Multi, &Running);
    collectFinished();
    startReady();
    curl_multi_poll(Multi, nullptr, 0, pollTimeoutMs(), nullptr);
  }
  cancelHeld();
}

/// Takes the submitted calls and answers a cancellation; false on stopping.
bool ChatClient::Impl::exchange() {
  std::unique_lock<std::mutex> L(Lock);
  if (Stopping)
    return false;
  if (CancelsDone < CancelsAsked) {
    // Everything held now was submitted before the cancellation.
    std::vector<ChatResult> Cancelled = cancelHeld();
    for (ChatResult &R : Cancelled)
      Results.push_back(std::move(R));
    CancelsDone = CancelsAsked;
    CancelAcked.notify_all();
  }
  for (std::unique_ptr<Call> &C : Submitted)
    Waiting.push_back(std::move(C));
  Submitted.clear();
  return true;
}

std::vector<ChatResult> ChatClient::Impl::cancelHeld() {
  std::vector<ChatResult> Out;
  auto Cancel = [&](const Call &C) {
    Out.push_back(resultOf(C, CallOutcome::Cancelled));
    Out.back().Error = "cancelled";
  };
  for (auto &[Easy, A] : Active) {
    curl_multi_remove_handle(Multi, Easy);
    Cancel(*A->C);
  }
  Active.clear();
  for (std::unique_ptr<Call> &C : Waiting)
    Cancel(*C);
  Waiting.clear();
  return Out;
}

void ChatClient::Impl::startReady() {
  Clock::time_point Now = Clock::now();
  while (Active.size() < Opts.Concurrency) {
    auto It = std::find_if(Waiting.begin(), Waiting.end(),
                           [&](const auto &C) { return C->NotBefore <= Now; });
    if (It == Waiting.end())
      return;
    std::unique_ptr<Call> C = std::move(*It);
    Waiting.erase(It);
    start(std::move(C));
  }
}

/// X-R3-Request and X-R3-Attempt let a server's log tie attempts to calls.
HeaderList ChatClient::Impl::headersFor(const Call &C) const {
  HeaderList L;
  auto Add = [&](const std::string &H) {
    L.reset(curl_slist_append(L.release(), H.c_str()));
  };
  Add("Content-Type: application/json");
  // curl would otherwise wait for a "100 Continue" that many servers never
  // send before it posts a body over 1 KiB.
  Add("Expect:");
  Add("X-R3-Request: " + std::to_string(C.Tag));
  Add("X-R3-Attempt: " + std::to_string(C.Attempts));
  if (!Opts.ApiKey.empty())
    Add("Authorization: Bearer " + Opts.ApiKey);
  return L;
}

void ChatClient::Impl::configure(Attempt &A) const {
  CURL *E = A.Easy.get();
  curl_easy_setopt(E, CURLOPT_URL, Target.Url.c_str());
  curl_easy_setopt(E, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(E, CURLOPT_POSTFIELDS, A.C->Body.data());
  curl_easy_setopt(E, CURLOPT_POSTFIELDSIZE_LARGE,
                   curl_off_t(A.C->Body.size()));
  curl_easy_setopt(E, CURLOPT_HTTPHEADER, A.Headers.get());
  curl_easy_setopt(E, CURLOPT_WRITEFUNCTION, appendReply);
  curl_easy_setopt(E, CURLOPT_WRITEDATA, &A.Reply);
  curl_easy_setopt(E, CURLOPT_ERRORBUFFER, A.ErrorBuffer);
  curl_easy_setopt(E, CURLOPT_TIMEOUT_MS, long(Opts.TimeoutSeconds * 1000));
  // Signals would be delivered to whichever thread; the resolver needs none.
  curl_easy_setopt(E, CURLOPT_NOSIGNAL, 1L);
}

void ChatClient::Impl::start(std::unique_ptr<Call> C) {
  auto A = std::make_unique<Attempt>();
  A->C = std::move(C);
  ++A->C->Attempts;
  A->Headers = headersFor(*A->C);
  A->Easy.reset(curl_easy_init());
  CURLMcode M = CURLM_OUT_OF_MEMORY;
  if (A->Easy) {
    configure(*A);
    M = curl_multi_add_handle(Multi, A->Easy.get());
  }
  if (M != CURLM_OK) {
    AttemptResult R;
    R.Outcome = CallOutcome::HttpError;
    R.Error = std::string("cannot start a request: ") + curl_multi_strerror(M);
    return finish(std::move(A->C), R);
  }
  CURL *E = A->Easy.get();
  Active.emplace(E, std::move(A));
}

void ChatClient::Impl::collectFinished() {
  int Left = 0;
  while (CURLMsg *M = curl_multi_info_read(Multi, &Left)) {
    if (M->msg != CURLMSG_DONE)
      continue;
    auto It = Active.find(M->easy_handle);
    if (It == Active.end())
      continue;
    CURLcode C = M->data.result; // M dies with the handle's removal
    std::unique_ptr<Attempt> A = std::move(It->second);
    Active.erase(It);
    curl_multi_remove_handle(Multi, A->Easy.get());
    AttemptResult R = C == CURLE_OK
                          ? httpResult(A->Easy.get(), A->Reply)
                          : transportResult(C, A->ErrorBuffer, Target.Authority,
                                            Opts.TimeoutSeconds);
    settle(std::move(A->C), std::move(R));
  }
}

/// A result, or another attempt after a backoff drawn uniformly below its
/// bound ("full jitter", which spreads clients that failed together), and
/// never sooner than the server's Retry-After.
void ChatClient::Impl::settle(std::unique_ptr<Call> C, AttemptResult R) {
  if (R.Outcome == CallOutcome::Ok || !R.Retryable ||
      C->Attempts > Opts.Retries)
    return finish(std::move(C), R);
  double Bound = backoffBound(Opts, C->Attempts - 1);
  double Wait = std::uniform_real_distribution<double>(0, Bound)(JitterRng);
  Wait = std::max(Wait, R.RetryAfter);
  C->NotBefore = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(Wait));
  // At the front: it has waited longest of the calls not yet started.
  Waiting.push_front(std::move(C));
}

void ChatClient::Impl::finish(std::unique_ptr<Call> C, const AttemptResult &R) {
  ChatResult Out = resultOf(*C, R.Outcome);
  Out.HttpStatus = R.Status;
  Out.Content = redact(R.Content);
  Out.TokensIn = R.TokensIn;
  Out.TokensOut = R.TokensOut;
  if (R.Outcome != CallOutcome::Ok)
    Out.Error = redact(describe(R, C->Attempts));
  post(std::move(Out));
}

void ChatClient::Impl::post(ChatResult R) {
  {
    std::lock_guard<std::mutex> G(Lock);
    Tokens += R.TokensIn + R.TokensOut;
    Results.push_back(std::move(R));
  }
  ResultsReady.notify_all();
}

/// Until the earliest backoff ends (when a slot is free) or curl's own timer.
int ChatClient::Impl::pollTimeoutMs() const {
  long Ms = 1000;
  curl_multi_timeout(Multi, &Ms);
  if (Ms < 0 || Ms > 1000)
    Ms = 1000;
  if (Active.size() >= Opts.Concurrency)
    return int(Ms);
  Clock::time_point Now = Clock::now();
  for (const std::unique_ptr<Call> &C : Waiting) {
    auto Left =
        std::chrono::ceil<std::chrono::milliseconds>(C->NotBefore - Now);
    Ms = std::min<long>(Ms, std::max<long>(0, Left.count()));
  }
  return int(Ms);
}

// --- the public face ---

Expected<std::unique_ptr<ChatClient>> ChatClient::create(ClientOptions O) {
  initCurlOnce();
  std::vector<std::string> Mistakes;
  Expected<Endpoint> E = parseEndpoint(O.Endpoint);
  if (!E)
    Mistakes.push_back(E.error().message());
  for (std::string &M : optionMistakes(O))
    Mistakes.push_back(std::move(M));
  if (!Mistakes.empty())
    return makeError("llm client: ", join(Mistakes, "; "));
  CURLM *M = curl_multi_init();
  if (!M)
    return makeError("llm client: curl_multi_init failed");
  auto I = std::make_unique<Impl>(std::move(O), std::move(*E), M);
  return std::unique_ptr<ChatClient>(new ChatClient(std::move(I)));
}

ChatClient::ChatClient(std::unique_ptr<Impl> I) : P(std::move(I)) {}
ChatClient::~ChatClient() = default;

bool ChatClient::submit(ChatRequest R) { return P->submit(std::move(R)); }

std::vector<ChatResult> ChatClient::take() {
  std::unique_lock<std::mutex> L(P->Lock);
  return P->take(L);
}

std::vector<ChatResult> ChatClient::wait(int TimeoutMs) {
  return P->wait(TimeoutMs);
}

unsigned ChatClient::inFlight() const {
  return P->locked([&] { return P->Outstanding; });
}
uint64_t ChatClient::callsMade() const {
  return P->locked([&] { return P->Calls; });
}
uint64_t ChatClient::tokensUsed() const {
  return P->locked([&] { return P->Tokens; });
}
bool ChatClient::budgetLeft() const {
  return P->locked([&] { return P->budgetLeftLocked(); });
}

void ChatClient::charge(uint64_t Calls, uint64_t Tokens) {
  std::lock_guard<std::mutex> G(P->Lock);
  P->Calls += Calls;
  P->Tokens += Tokens;
}

void ChatClient::cancelAll() { P->cancelAll(); }

} // namespace r3::llm
