// KernelLinkControl: `ip link set NAME up|down` as one rtnetlink request. A fresh socket
// per call: the hold changes a few ports when the leaf loses or regains the fabric, never
// in a steady state, so nothing is worth keeping open. The kernel answers inline (the
// request does no I/O), so the receive below returns at once; a timeout bounds it anyway.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>

#include "edges.h"
#include "twinrail/common/unique_fd.h"

namespace twinrail::hostrouted {

int KernelLinkControl::setLinkUp(const std::string& name, bool up) {
    unsigned index = if_nametoindex(name.c_str());
    if (index == 0) return ENODEV;
    UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (fd.get() < 0) return errno;
    timeval timeout{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    struct {
        nlmsghdr header;
        ifinfomsg info;
    } request{};
    request.header.nlmsg_len = sizeof(request);
    request.header.nlmsg_type = RTM_NEWLINK;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    request.header.nlmsg_seq = 1;
    request.info.ifi_family = AF_UNSPEC;
    request.info.ifi_index = static_cast<int>(index);
    request.info.ifi_flags = up ? IFF_UP : 0;
    request.info.ifi_change = IFF_UP;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), &request, sizeof(request), 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof(kernel)) < 0)
        return errno;
    alignas(nlmsghdr) char buffer[4096];
    ssize_t got = ::recv(fd.get(), buffer, sizeof(buffer), 0);
    if (got < 0) return errno;
    const auto* reply = reinterpret_cast<const nlmsghdr*>(buffer);
    if (!NLMSG_OK(reply, static_cast<unsigned>(got)) || reply->nlmsg_type != NLMSG_ERROR)
        return EPROTO;
    const auto* ack = static_cast<const nlmsgerr*>(NLMSG_DATA(reply));
    return -ack->error;
}

}  // namespace twinrail::hostrouted
