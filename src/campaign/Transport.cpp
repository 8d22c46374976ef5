// The pipe link (Transport.h): a worker process on this node.
#include "campaign/Transport.h"

#include "campaign/Worker.h"

namespace r3 {

namespace {
class PipeLink final : public WorkerLink {
public:
  explicit PipeLink(std::unique_ptr<WorkerProcess> P) : P(std::move(P)) {}
  Error send(std::vector<uint8_t> Message) override {
    return P->send(Message);
  }
  int pollFd() const override { return P->readFd(); }
  Expected<Got> receive(WorkerMessage &Out) override {
    auto M = readMessage(P->readFd());
    if (!M)
      return M.takeError();
    if (!*M)
      return Got::Closed;
    Out = std::move(**M);
    return Got::Message;
  }
  bool restartable() const override { return true; }
  void shutdown(double Seconds) override { P->shutdown(Seconds); }

private:
  std::unique_ptr<WorkerProcess> P;
};
} // namespace

std::unique_ptr<WorkerLink> pipeLink(std::unique_ptr<WorkerProcess> P) {
  return std::make_unique<PipeLink>(std::move(P));
}

} // namespace r3
