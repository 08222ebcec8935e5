// The NIC's "dual-send ARP": one ARP request for the gateway, from the NIC's own address,
// out of one port. The leaf that receives it learns the NIC as a neighbor, which
// hostrouted turns into a host route.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/netlink/arp.h"

namespace twinrail::lab {
namespace {}  // namespace

bool sendArpAnnounce(const std::string& ifname, const std::string& source,
                     const std::string& target, std::string& error, bool reply) {
    auto src = IpAddr::parse(source);
    auto dst = IpAddr::parse(target);
    if (!src || !dst || !src->isV4() || !dst->isV4()) {
        error = "not IPv4 addresses: " + source + ", " + target;
        return false;
    }
    int fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ARP));
    if (fd < 0) {
        error = std::string("packet socket: ") + std::strerror(errno);
        return false;
    }
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    bool ok = ioctl(fd, SIOCGIFHWADDR, &ifr) == 0;
    int ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
    if (!ok || ifindex == 0) {
        error = "no interface " + ifname;
        close(fd);
        return false;
    }
    MacAddr mac{};
    std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, 6);
    auto pkt = netlink::buildArpRequest(mac, *src, *dst);
    if (reply) pkt[7] = 2;  // ARP operation: reply (an unsolicited one, as a spoofer sends)
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_ARP);
    to.sll_ifindex = ifindex;
    to.sll_halen = 6;
    std::memset(to.sll_addr, 0xff, 6);
    ok = sendto(fd, pkt.data(), pkt.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
         static_cast<ssize_t>(pkt.size());
    if (!ok) error = std::string("send on ") + ifname + ": " + std::strerror(errno);
    close(fd);
    return ok;
}

}  // namespace twinrail::lab
