// hostrouted's link control edge (edges.h) over a FakeKernel.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "edges.h"
#include "twinrail_fakes/kernel.h"

namespace twinrail::fakes {

// Links' admin state, as `ip link set X up|down` changes it in a FakeKernel: the call
// answers at once, and the link event follows on the io_context, as the kernel's does.
// Carrier (operUp) follows admin state here, as a veth's does with its peer up.
class FakeLinkControl final : public hostrouted::LinkControl {
  public:
    FakeLinkControl(boost::asio::io_context& io, FakeKernel*& kernel) : io_(io), kernel_(kernel) {}
    int setLinkUp(const std::string& name, bool up) override {
        calls.emplace_back(name, up);
        if (failWith != 0) return failWith;
        const netlink::LinkState* link = kernel_ ? kernel_->linkNamed(name) : nullptr;
        if (link == nullptr) return ENODEV;
        netlink::LinkState next = *link;
        next.adminUp = up;
        next.operUp = up && carrier;
        boost::asio::post(io_, [k = kernel_, next] { k->setLink(next); });
        return 0;
    }
    std::vector<std::pair<std::string, bool>> calls;  // every call, in order
    int failWith = 0;
    bool carrier = true;

  private:
    boost::asio::io_context& io_;
    FakeKernel*& kernel_;
};

}  // namespace twinrail::fakes
