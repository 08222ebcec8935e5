// planesteer's packet edge as a fake: the wire behind a bond's ports and the two planes
// beyond them. Every frame a port sends is recorded; an ARP request or an ICMP echo
// request is answered, on the loop as a real reply arrives, unless the test made that
// port's plane silent for that peer. Tests also play frames in themselves: sampled
// outgoing traffic, forged replies.
#pragma once

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "echo_frame.h"
#include "packet_port.h"
#include "twinrail/netlink/arp.h"

namespace twinrail::fakes {

class FakeWire {
  public:
    struct Sent {
        std::string port;
        uint16_t proto = 0;
        MacAddr dst{};
        std::vector<uint8_t> frame;
    };

    explicit FakeWire(boost::asio::io_context& io) : io_(io) {}

    planesteer::PacketPortFactory factory() {
        return [this](const std::string& name, planesteer::PacketPort::Handler onFrame) {
            return std::make_unique<Port>(*this, name, std::move(onFrame));
        };
    }

    // Whether the plane behind `port` still answers for `peer` (by default every plane
    // answers every peer).
    void setAnswering(const std::string& port, const IpAddr& peer, bool answers) {
        if (answers) {
            silent_.erase({port, peer});
        } else {
            silent_.insert({port, peer});
        }
    }
    // The leaf's MAC behind a port (it answers ARP): 02:1e:af:00:00:<last char>.
    static MacAddr leafMac(const std::string& port) {
        return {0x02, 0x1e, 0xaf, 0, 0, static_cast<uint8_t>(port.empty() ? 0 : port.back())};
    }

    // A frame heard on `port`, delivered on the loop (dropped if the port is closed).
    void deliver(const std::string& port, std::vector<uint8_t> frame, int pkttype = PACKET_HOST) {
        boost::asio::post(io_, [this, port, frame = std::move(frame), pkttype] {
            auto it = open_.find(port);
            if (it != open_.end()) it->second->onFrame(frame.data(), frame.size(), pkttype);
        });
    }
    // The kernel's sample of an outgoing IPv4 packet to `dst` (its 20-byte header).
    void sample(const std::string& port, const IpAddr& src, const IpAddr& dst) {
        std::vector<uint8_t> h(20, 0);
        h[0] = 0x45;
        h[9] = 17;  // UDP: ICMP is never sampled
        std::memcpy(&h[12], src.data(), 4);
        std::memcpy(&h[16], dst.data(), 4);
        deliver(port, std::move(h), PACKET_OUTGOING);
    }

    // ARP requests for `peer` sent out of `port`.
    size_t arpRequests(const std::string& port, const IpAddr& peer) const {
        size_t n = 0;
        for (const auto& s : sent) {
            if (s.port != port || s.proto != ETH_P_ARP) continue;
            auto m = netlink::parseArp(s.frame.data(), s.frame.size());
            if (m && m->op == netlink::kArpRequest && m->target == peer) ++n;
        }
        return n;
    }
    // Echo requests to `peer` sent out of `port` (to the gateway's MAC: `dst`).
    size_t echoRequests(const std::string& port, const IpAddr& peer) const {
        size_t n = 0;
        for (const auto& s : sent) {
            if (s.port != port || s.proto != ETH_P_IP) continue;
            if (planesteer::ipv4Destination(s.frame.data(), s.frame.size()) == peer) ++n;
        }
        return n;
    }
    bool isOpen(const std::string& port) const { return open_.count(port) > 0; }

    std::vector<Sent> sent;
    std::set<std::string> failOpen;     // open() throws, as for a port that does not exist
    std::set<std::string> throwOnSend;  // send() throws (a bug somewhere under the loop)

  private:
    class Port final : public planesteer::PacketPort {
      public:
        Port(FakeWire& wire, std::string name, Handler onFrame)
            : wire_(wire), name_(std::move(name)), onFrame_(std::move(onFrame)) {}
        ~Port() override {
            if (auto it = wire_.open_.find(name_); it != wire_.open_.end() && it->second == this)
                wire_.open_.erase(it);
        }
        Port(const Port&) = delete;
        Port& operator=(const Port&) = delete;
        void open(const std::vector<sock_filter>& filter) override {
            if (wire_.failOpen.count(name_) > 0)
                throw std::system_error(ENODEV, std::generic_category(), "no port " + name_);
            filter_ = filter;
            wire_.open_[name_] = this;
        }
        bool send(const uint8_t* data, size_t len, uint16_t proto, const MacAddr& dst) override {
            if (wire_.throwOnSend.count(name_) > 0) throw std::runtime_error("send on " + name_);
            if (wire_.open_.count(name_) == 0) return false;
            wire_.sent.push_back({name_, proto, dst, std::vector<uint8_t>(data, data + len)});
            wire_.answer(name_, wire_.sent.back());
            return true;
        }
        void onFrame(const uint8_t* data, size_t len, int pkttype) { onFrame_(data, len, pkttype); }

      private:
        FakeWire& wire_;
        std::string name_;
        Handler onFrame_;
        std::vector<sock_filter> filter_;
    };

    void answer(const std::string& port, const Sent& s) {
        if (s.proto == ETH_P_ARP) {
            auto m = netlink::parseArp(s.frame.data(), s.frame.size());
            if (!m || m->op != netlink::kArpRequest || silent_.count({port, m->target}) > 0) return;
            deliver(port, arpReply(leafMac(port), m->target, m->senderMac, m->sender));
        } else if (s.proto == ETH_P_IP && s.frame.size() >= 28) {
            auto dst = planesteer::ipv4Destination(s.frame.data(), s.frame.size());
            if (!dst || silent_.count({port, *dst}) > 0) return;
            deliver(port, echoReply(s.frame));
        }
    }

    static std::vector<uint8_t> arpReply(const MacAddr& mac, const IpAddr& ip, const MacAddr& toMac,
                                         const IpAddr& to) {
        std::vector<uint8_t> f{0, 1, 8, 0, 6, 4, 0, netlink::kArpReply};
        f.insert(f.end(), mac.begin(), mac.end());
        f.insert(f.end(), ip.data(), ip.data() + 4);
        f.insert(f.end(), toMac.begin(), toMac.end());
        f.insert(f.end(), to.data(), to.data() + 4);
        return f;
    }
    // The request turned around, as the peer's kernel does: addresses swapped, type 0,
    // identifier, sequence number and payload (the nonce) kept.
    static std::vector<uint8_t> echoReply(std::vector<uint8_t> p) {
        size_t ihl = static_cast<size_t>(p[0] & 0x0f) * 4;
        std::swap_ranges(p.begin() + 12, p.begin() + 16, p.begin() + 16);
        auto put = [&p](size_t at, uint16_t v) {
            p[at] = static_cast<uint8_t>(v >> 8);
            p[at + 1] = static_cast<uint8_t>(v);
        };
        put(10, 0);
        put(10, planesteer::internetChecksum(p.data(), ihl));
        p[ihl] = 0;
        put(ihl + 2, 0);
        put(ihl + 2, planesteer::internetChecksum(p.data() + ihl, p.size() - ihl));
        return p;
    }

    boost::asio::io_context& io_;
    std::map<std::string, Port*> open_;
    std::set<std::pair<std::string, IpAddr>> silent_;
};

}  // namespace twinrail::fakes
