#include "notice_intake.h"

namespace twinrail::planesteer {

namespace {

bool isLoss(fnn::Event e) {
    return e == fnn::Event::HostPortDown || e == fnn::Event::LeafCutOff;
}

}  // namespace

NoticeIntake::NoticeIntake(const Config& config) {
    for (const auto& [name, bond] : config.bonds) {
        BondGuards guards;
        guards.planes = bond.planes;
        for (const auto& [plane, key] : bond.noticeKeys) {
            fnn::GuardSettings g;
            g.plane = plane;
            g.kind = fnn::KeyKind::Receiver;
            g.keys = {{0, key}};
            if (auto s = config.noticeSenders.find(plane); s != config.noticeSenders.end())
                g.senders = s->second;
            guards.byPlane.emplace(plane, fnn::NoticeGuard(std::move(g)));
        }
        bonds_.emplace(name, std::move(guards));
    }
}

std::variant<NoticeForBond, fnn::Refused> NoticeIntake::admit(
    std::span<const uint8_t> datagram, const IpAddr& source, const IpAddr& destination,
    const std::map<std::string, IpAddr>& bondAddresses, uint64_t wallNs, fnn::MonoTime now) {
    auto refuse = [this](fnn::Refusal r, std::string detail) {
        ++own_.refused[static_cast<size_t>(r)];
        return fnn::Refused{r, std::move(detail)};
    };
    const std::string* bondName = nullptr;
    for (const auto& [name, address] : bondAddresses)
        if (address == destination) bondName = &name;
    auto bond = bondName == nullptr ? bonds_.end() : bonds_.find(*bondName);
    if (bond == bonds_.end())
        return refuse(fnn::Refusal::Malformed, "to " + destination.str() + ": no bond's address");
    // The plane byte decides the guard; the guard checks everything, that byte included.
    if (datagram.size() < fnn::kHeaderBytes) return refuse(fnn::Refusal::Malformed, "too short");
    auto guard = bond->second.byPlane.find(datagram[6]);
    if (guard == bond->second.byPlane.end()) {
        return refuse(fnn::Refusal::WrongPlane,
                      "plane " + std::to_string(datagram[6]) + " to " + bond->first);
    }
    auto v = guard->second.admit(datagram, source, wallNs, now);
    if (auto* refused = std::get_if<fnn::Refused>(&v)) return std::move(*refused);
    NoticeForBond out{bond->first, 0, false, std::move(std::get<fnn::Notice>(v))};
    const auto& planes = bond->second.planes;
    for (size_t p = 0; p < planes.size(); ++p)
        if (planes[p] == out.notice.plane) out.port = p;
    out.lost = isLoss(out.notice.event);
    return out;
}

fnn::GuardCounters NoticeIntake::counters() const {
    fnn::GuardCounters total = own_;
    for (const auto& [name, guards] : bonds_) {
        for (const auto& [plane, guard] : guards.byPlane) {
            total.accepted += guard.counters().accepted;
            for (size_t i = 0; i < fnn::kRefusals; ++i)
                total.refused[i] += guard.counters().refused[i];
        }
    }
    return total;
}

}  // namespace twinrail::planesteer
