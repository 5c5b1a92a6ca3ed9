// Which network interface a rank's c10d store and gloo transport use. Across
// hosts a host name is no address: it may resolve to 127.0.1.1, or not at all,
// on another host, and gloo's default device takes whatever the name resolves
// to. So the interface is chosen explicitly, in this order:
//   GLOO_SOCKET_IFNAME (PyTorch's variable; the first name of a comma list),
//   Open MPI's btl_tcp_if_include (as mpirun passes --mca to its ranks),
//   the interface holding this host name's IPv4 address, if not loopback,
//   the first interface that is up, not loopback, with an IPv4 address.
#pragma once
#include <string>
#include <vector>

namespace zb {

struct NetInterface {
  std::string name;       // e.g. eth0
  std::string ipv4;       // its address, dotted
  std::string chosen_by;  // which rule above chose it, for the record
};

// Throws UsageError naming the variable and the interfaces there are, when a
// named interface does not exist or has no IPv4 address; RunError when there
// is no usable interface at all.
NetInterface choose_net_interface();

// "eth0 10.0.0.1, lo 127.0.0.1": every interface that is up with an IPv4 address.
std::string list_net_interfaces();

}  // namespace zb
