#include "node_watch.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

namespace zb {
namespace {

constexpr char kGoodbye = 'b', kSignalled = 's';

// Probes a silent peer after 5 s without traffic, every 1 s, 5 times: a host
// gone without a word is found within about 10 s.
void keep_alive(int fd) {
  const int on = 1, idle = 5, interval = 1, count = 5;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// Rank 0's listening socket on `ipv4`, any port; -1 if none can be had. `port` is set.
int listen_on(const std::string& ipv4, int& port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) return -1;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 4096) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

// A node's first rank: connected to rank 0 at "ipv4 port", within 5 s, having said which node it is.
int connect_to(const std::string& where, int node) {
  std::istringstream in(where);
  std::string ipv4;
  int port = 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (!(in >> ipv4 >> port) || inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) return -1;
  address.sin_port = htons(static_cast<uint16_t>(port));
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int started = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  pollfd p{fd, POLLOUT, 0};
  int error = 0;
  socklen_t length = sizeof error;
  const bool connected = started == 0 || (errno == EINPROGRESS && ::poll(&p, 1, 5000) == 1 &&
                                          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0);
  const std::string hello = std::to_string(node) + "\n";
  if (!connected || ::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size())) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, 0);  // blocking again, for the goodbye
  keep_alive(fd);
  return fd;
}

// "node2 (ranks 2, 3)" for each node index, from every rank's "node host" line.
std::map<int, std::string> node_names(const std::vector<std::string>& lines) {
  std::map<int, std::string> host;
  std::map<int, std::string> ranks;
  for (std::size_t rank = 0; rank < lines.size(); ++rank) {
    std::istringstream in(lines[rank]);
    int node = 0;
    std::string name;
    in >> node >> name;
    host[node] = name;
    ranks[node] += (ranks[node].empty() ? "" : ", ") + std::to_string(rank);
  }
  std::map<int, std::string> names;
  for (const auto& [node, name] : host)
    names[node] = name + " (rank" + (ranks[node].find(',') == std::string::npos ? " " : "s ") + ranks[node] + ")";
  return names;
}

// The node index a connection's first line names, or -1; read up to its
// newline only (a goodbye or a signal's word may follow at once), within 5 s.
int read_hello(int fd) {
  std::string line;
  while (line.size() < 16) {
    pollfd p{fd, POLLIN, 0};
    char c = 0;
    if (::poll(&p, 1, 5000) != 1 || ::recv(fd, &c, 1, 0) != 1) return -1;
    if (c == '\n') break;
    line += c;
  }
  int node = -1;
  return std::sscanf(line.c_str(), "%d", &node) == 1 ? node : -1;
}

// The next connection on `listener` within 5 s (one counted may yet be
// in flight; one that never comes leaves its node unwatched), or -1.
int accept_within(int listener) {
  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return -1;
  return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
}

}  // namespace

NodeWatch::NodeWatch(const World& world, const std::string& host, const std::optional<NetInterface>& net) {
  if (world.nodes < 2) return;
  try {
    connect_nodes(world, host, net);
  } catch (...) {  // a peer gone while connecting: no destructor runs, so nothing stays open
    close_descriptors();
    throw;
  }
}

// The connections: rank 0 listens, each other node's first rank connects and says which node it is.
void NodeWatch::connect_nodes(const World& world, const std::string& host, const std::optional<NetInterface>& net) {
  SubWorld all(world.size);
  const std::vector<std::string> lines = all.gather_strings(std::to_string(world.node) + " " + host);
  int port = 0;
  int listener = -1;
  struct Closing {  // the listener, closed however this ends
    int& fd;
    ~Closing() {
      if (fd >= 0) ::close(fd);
    }
  } closing{listener};
  std::string where;  // rank 0's "ipv4 port", "" when it cannot listen
  if (world.rank == 0) {
    std::optional<NetInterface> chosen = net;
    if (!chosen) try {
        chosen = choose_net_interface();
      } catch (const std::exception&) {  // unwatched, not failed
      }
    if (chosen) listener = listen_on(chosen->ipv4, port);
    if (listener >= 0) where = chosen->ipv4 + " " + std::to_string(port);
  }
  const std::string at = broadcast_from_rank_zero(where);
  const bool leader = world.local_rank == 0 && world.node != 0;  // node 0 is rank 0's
  if (leader && !at.empty()) fd_ = connect_to(at, world.node);
  const int connected = static_cast<int>(world_sum(fd_ >= 0 ? 1.0 : 0.0));
  if (world.rank != 0 || listener < 0) return;
  const std::map<int, std::string> names = node_names(lines);
  for (int i = 0; i < connected; ++i) {
    const int fd = accept_within(listener);
    if (fd < 0) break;
    const int node = read_hello(fd);
    const auto name = names.find(node);
    if (name == names.end()) {
      ::close(fd);
      continue;
    }
    keep_alive(fd);
    peers_.push_back({fd, name->second});
  }
  if (peers_.empty() || ::pipe2(stop_, O_CLOEXEC) != 0) return;
  thread_ = std::thread([this] { watch(); });
}

NodeWatch::~NodeWatch() {
  if (fd_ >= 0) {
    [[maybe_unused]] const ssize_t n = ::send(fd_, &kGoodbye, 1, MSG_NOSIGNAL);
  }
  if (thread_.joinable()) {
    const char stop = 0;
    [[maybe_unused]] const ssize_t n = ::write(stop_[1], &stop, 1);
    thread_.join();
  }
  close_descriptors();
}

void NodeWatch::close_descriptors() {
  for (int& fd : stop_)
    if (fd >= 0) ::close(fd), fd = -1;
  for (Peer& p : peers_)
    if (p.fd >= 0) ::close(p.fd), p.fd = -1;
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
}

void NodeWatch::say_signalled() const {
  if (fd_ < 0) return;
  [[maybe_unused]] const ssize_t n = ::send(fd_, &kSignalled, 1, MSG_NOSIGNAL);
}

void NodeWatch::watch() {
  std::vector<bool> open(peers_.size(), true);
  for (;;) {
    std::vector<pollfd> fds{{stop_[0], POLLIN, 0}};
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < peers_.size(); ++i)
      if (open[i]) fds.push_back({peers_[i].fd, POLLIN, 0}), which.push_back(i);
    if (which.empty()) return;
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      const std::size_t i = which[k - 1];
      char byte = 0;
      const ssize_t n = ::recv(peers_[i].fd, &byte, 1, 0);
      if (n > 0 && byte != kGoodbye && byte != kSignalled) continue;
      open[i] = false;
      if (n > 0) continue;  // done, or ended by a signal that reaches every node: not lost
      const std::string why = n == 0               ? "its processes ended without a word"
                              : errno == ETIMEDOUT ? "its host stopped answering"
                                                   : std::string("its connection failed: ") + std::strerror(errno);
      std::lock_guard<std::mutex> lock(mutex_);
      losses_.push_back({peers_[i].name, why, std::chrono::steady_clock::now()});
    }
  }
}

std::string NodeWatch::lost_nodes(std::chrono::milliseconds wait) const {
  if (peers_.empty()) return "";  // nothing watched: nothing to wait for
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!losses_.empty() || std::chrono::steady_clock::now() >= until) {
        std::string text;
        const auto now = std::chrono::steady_clock::now();
        for (const Loss& l : losses_) {
          char ago[32];
          std::snprintf(ago, sizeof ago, "%.1f", std::chrono::duration<double>(now - l.when).count());
          text += (text.empty() ? "" : "; ") + l.name + " was lost " + ago + " s earlier: " + l.why;
        }
        return text;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace zb
