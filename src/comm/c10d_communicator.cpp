#include "c10d_communicator.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "net_interface.hpp"
#include "src/common/errors.hpp"
#include "world.hpp"

namespace zb {
namespace {

// Long enough for every rank of a group to arrive (they leave the same MPI
// split together); short enough that an unreachable store is named in seconds.
constexpr std::chrono::seconds kStoreConnectSeconds{30};

c10::intrusive_ptr<c10d::TCPStore> serve_store(const std::string& host, int workers) {
  c10d::TCPStoreOptions options;
  options.port = 0;  // ephemeral
  options.isServer = true;
  options.numWorkers = workers;
  options.waitWorkers = false;
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

// One TCP connection attempt, bounded by `deadline`; true if it was accepted.
bool connects_before(const sockaddr_in& address, std::chrono::steady_clock::time_point deadline) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool accepted = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  if (!accepted && errno == EINPROGRESS) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    accepted = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) == 1 &&
               ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
  }
  ::close(fd);
  return accepted;
}

// Whether rank 0's store accepts a connection within kStoreConnectSeconds.
// c10d's own client adds a random back-off of up to tens of seconds after its
// first timeout; this bound is zero-bench's, so an unreachable store is named
// in the time the message says.
bool store_reachable(const std::string& host, uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) return true;  // not an address: c10d resolves it
  const auto deadline = std::chrono::steady_clock::now() + kStoreConnectSeconds;
  while (std::chrono::steady_clock::now() < deadline) {
    if (connects_before(address, deadline)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

[[noreturn]] void unreachable_store(const std::string& host, uint16_t port, const std::string& interface,
                                    const std::string& why) {
  throw RunError("cannot reach rank 0's c10d store at " + host + ":" + std::to_string(port) + " within " +
                 std::to_string(kStoreConnectSeconds.count()) + " s from this host (" +
                 (interface.empty() ? std::string("loopback") : "interface " + interface) +
                 "); set GLOO_SOCKET_IFNAME on every host to the interface that links them" + why);
}

c10::intrusive_ptr<c10d::TCPStore> reach_store(const std::string& host, uint16_t port, int workers,
                                               const std::string& interface) {
  if (!store_reachable(host, port)) unreachable_store(host, port, interface, "");
  c10d::TCPStoreOptions options;
  options.port = port;
  options.isServer = false;
  options.numWorkers = workers;
  options.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kStoreConnectSeconds);
  try {
    auto store = c10::make_intrusive<c10d::TCPStore>(host, options);
    store->setTimeout(c10d::Store::kDefaultTimeout);
    return store;
  } catch (const std::exception& e) {
    unreachable_store(host, port, interface, ". c10d: " + std::string(e.what()).substr(0, 300));
  }
}

}  // namespace

c10::intrusive_ptr<c10d::Store> make_group_store(const SubWorld& group, StoreAddress& address) {
  address.single_node = group.single_node();
  std::string host = "127.0.0.1";
  if (!address.single_node) {
    const NetInterface chosen = choose_net_interface();
    address.interface = chosen.name;
    host = chosen.ipv4;
  }
  c10::intrusive_ptr<c10d::TCPStore> server;
  std::string endpoint;
  if (group.rank() == 0) {
    server = serve_store(host, group.size());
    endpoint = host + ":" + std::to_string(server->getPort());
  }
  endpoint = group.broadcast_string(endpoint, 0);
  const auto colon = endpoint.rfind(':');
  address.host = endpoint.substr(0, colon);
  if (group.rank() == 0) return server;
  return reach_store(address.host, static_cast<uint16_t>(std::stoi(endpoint.substr(colon + 1))), group.size(),
                     address.interface);
}

C10dCommunicator::C10dCommunicator(std::string backend, const SubWorld& group, c10::intrusive_ptr<c10d::Backend> pg,
                                   bool on_cuda)
    : Communicator(group.rank(), group.size()),
      backend_(std::move(backend)),
      group_(group),
      pg_(std::move(pg)),
      on_cuda_(on_cuda) {}

void C10dCommunicator::broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) {
  std::vector<c10::intrusive_ptr<c10d::Work>> pending;
  pending.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::vector<at::Tensor> one{tensors[i]};
    c10d::BroadcastOptions options;
    options.rootRank = roots[i];
    pending.push_back(pg_->broadcast(one, options));
  }
  for (auto& work : pending) work->wait();
}

// The single-tensor all-gather: NCCL writes straight into `out` (gloo
// gathers into views of it); the list form would gather into a temporary
// W-slot buffer and copy it out.
void C10dCommunicator::all_gather(at::Tensor& out, const at::Tensor& in) {
  at::Tensor input = in;
  pg_->_allgather_base(out, input)->wait();
}

void C10dCommunicator::all_reduce_sum(at::Tensor& tensor) {
  std::vector<at::Tensor> one{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  pg_->allreduce(one, options)->wait();
}

// The single-tensor form, the mirror of all_gather (NCCL reads `in` in place).
void C10dCommunicator::reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) {
  at::Tensor input = in;
  c10d::ReduceScatterOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  pg_->_reduce_scatter_base(out, input, options)->wait();
}

void C10dCommunicator::reduce_sum(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> one{tensor};
  c10d::ReduceOptions options;
  options.rootRank = root;
  options.reduceOp = c10d::ReduceOp::SUM;
  pg_->reduce(one, options)->wait();
}

namespace {
struct PendingWork : PendingCollective {
  explicit PendingWork(c10::intrusive_ptr<c10d::Work> w) : work(std::move(w)) {}
  void wait() override { work->wait(); }
  c10::intrusive_ptr<c10d::Work> work;
};
}  // namespace

std::unique_ptr<PendingCollective> C10dCommunicator::start_all_gather(at::Tensor& out, const at::Tensor& in) {
  at::Tensor input = in;
  return std::make_unique<PendingWork>(pg_->_allgather_base(out, input));
}

std::unique_ptr<PendingCollective> C10dCommunicator::start_broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> one{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  return std::make_unique<PendingWork>(pg_->broadcast(one, options));
}

void C10dCommunicator::barrier() {
  if (on_cuda_) torch::cuda::synchronize();
  group_.barrier();
}

void C10dCommunicator::close() {
  barrier();
  pg_->shutdown();
}

}  // namespace zb
