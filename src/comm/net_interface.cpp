#include "net_interface.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "src/common/errors.hpp"

namespace zb {
namespace {

struct Candidate {
  std::string name, ipv4;
  bool loopback;
};

std::vector<Candidate> ipv4_interfaces_up() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, freeifaddrs);
  std::vector<Candidate> found;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP)) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    found.push_back({a->ifa_name, text, (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  return found;
}

std::optional<Candidate> named(const std::vector<Candidate>& up, const std::string& name) {
  for (const auto& c : up)
    if (c.name == name) return c;
  return std::nullopt;
}

std::string first_of_list(const std::string& list) { return list.substr(0, list.find(',')); }

// Whether `ipv4` lies in `cidr` (a.b.c.d/n), as Open MPI's if_include accepts subnets too.
bool in_subnet(const std::string& ipv4, const std::string& cidr) {
  const auto slash = cidr.find('/');
  in_addr address{}, network{};
  if (slash == std::string::npos || inet_pton(AF_INET, ipv4.c_str(), &address) != 1 ||
      inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &network) != 1)
    return false;
  const std::string prefix = cidr.substr(slash + 1);
  if (prefix.empty() || prefix.size() > 2 || prefix.find_first_not_of("0123456789") != std::string::npos) return false;
  const int bits = std::stoi(prefix);
  if (bits > 32) return false;
  const uint32_t mask = bits == 0 ? 0 : htonl(~uint32_t{0} << (32 - bits));
  return (address.s_addr & mask) == (network.s_addr & mask);
}

std::optional<Candidate> named_or_in_subnet(const std::vector<Candidate>& up, const std::string& entry) {
  if (entry.find('/') == std::string::npos) return named(up, entry);
  for (const auto& c : up)
    if (in_subnet(c.ipv4, entry)) return c;
  return std::nullopt;
}

// The interface named by a variable (a name, or a subnet); UsageError if it
// names none that is up with IPv4.
std::optional<NetInterface> from_variable(const std::vector<Candidate>& up, const char* variable) {
  const char* value = std::getenv(variable);
  if (!value || !*value) return std::nullopt;
  const std::string entry = first_of_list(value);
  const auto c = named_or_in_subnet(up, entry);
  if (!c)
    throw UsageError(std::string(variable) + "=" + value + ": no interface '" + entry +
                     "' is up with an IPv4 address on this host; there are: " + list_net_interfaces());
  if (c->loopback)  // the ranks span hosts (this is asked only then): loopback reaches none of the others
    throw UsageError(std::string(variable) + "=" + value + " names the loopback interface " + c->name +
                     ", which the other hosts cannot reach; name the interface that links them (there are: " +
                     list_net_interfaces() + ")");
  return NetInterface{c->name, c->ipv4, variable};
}

// The interface holding the address this host's name resolves to, if any and not loopback.
std::optional<NetInterface> from_host_name(const std::vector<Candidate>& up) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return std::nullopt;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* result = nullptr;
  if (getaddrinfo(host, nullptr, &hints, &result) != 0) return std::nullopt;
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(result, freeaddrinfo);
  for (const addrinfo* r = result; r; r = r->ai_next) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(r->ai_addr)->sin_addr, text, sizeof text);
    for (const auto& c : up)
      if (c.ipv4 == text && !c.loopback) return NetInterface{c.name, c.ipv4, "the host name's address"};
  }
  return std::nullopt;
}

}  // namespace

std::string list_net_interfaces() {
  std::string out;
  for (const auto& c : ipv4_interfaces_up()) out += (out.empty() ? "" : ", ") + c.name + " " + c.ipv4;
  return out.empty() ? "none" : out;
}

NetInterface choose_net_interface() {
  const auto up = ipv4_interfaces_up();
  if (auto chosen = from_variable(up, "GLOO_SOCKET_IFNAME")) return *chosen;
  if (auto chosen = from_variable(up, "OMPI_MCA_btl_tcp_if_include")) return *chosen;
  if (auto chosen = from_host_name(up)) return *chosen;
  for (const auto& c : up)
    if (!c.loopback) return {c.name, c.ipv4, "the first interface up that is not loopback"};
  throw RunError(
      "no network interface is up with an IPv4 address other than loopback, and the ranks span "
      "hosts; set GLOO_SOCKET_IFNAME to the interface that links them");
}

}  // namespace zb
