#include "es_attachment.h"

namespace twinrail::hostrouted {
namespace {

EsDecision no(std::string why) {
    return EsDecision{false, Source::Local, false, false, std::move(why)};
}
EsDecision local(std::string why) {
    return EsDecision{true, Source::Local, false, false, std::move(why)};
}
EsDecision peer(std::string why) {
    return EsDecision{true, Source::EsPeer, true, false, std::move(why)};
}

// A resolved entry the kernel learned itself: this leaf's stack talked to the host.
bool learnedHere(const KernelNeighborFacts& k) {
    return k.present && k.usable && !k.ours && !k.installedByZebra && !k.externLearned;
}

}  // namespace

EsDecision decideAttachment(const IpAddr& ip, const KernelNeighborFacts& kernel,
                            const EvpnView* view, const std::set<std::string>& downPorts) {
    if (kernel.externLearned) return no("behind a remote VTEP (extern_learn)");
    if (view == nullptr) {
        // Until the first read, nothing that may be attached is withdrawn: zebra's own
        // entries too (it turns a synced host's entry into its own), FRR's read decides.
        if (kernel.ours) return peer("kept from before: FRR not read yet");
        if (learnedHere(kernel)) return local("learned here");
        if (kernel.present && kernel.usable && kernel.installedByZebra) {
            return EsDecision{true, Source::EsPeer, false, false,
                              "zebra's entry, kept: FRR not read yet"};
        }
        return no("not learned here; FRR not read yet");
    }
    auto it = view->neighbors.find(ip);
    const EvpnNeighbor* n = it == view->neighbors.end() ? nullptr : &it->second;
    if (n != nullptr && n->remote) {
        return no("behind remote VTEP " + (n->remoteVtep.empty() ? "?" : n->remoteVtep));
    }
    const EvpnMac* mac = n != nullptr ? view->macOf(*n) : nullptr;
    if (mac != nullptr && mac->remote) return no("its MAC is behind a remote VTEP");
    if (mac != nullptr && !mac->esi.empty()) {
        const EvpnSegment* es = view->segmentOf(*mac);
        if (es == nullptr || !es->local) return no("on ES " + mac->esi + ", not local here");
        if (!es->operUp || downPorts.count(es->accessPort) > 0) {
            EsDecision d = no("on ES " + mac->esi + ", down here (" + es->accessPort + ")");
            d.detour = true;
            return d;
        }
        // zebra calls a STALE entry "local-inactive"; the kernel's resolved entry is what
        // counts here (hostrouted's probes keep it fresh, or withdraw it).
        if (learnedHere(kernel)) return local("learned here, on ES " + mac->esi);
        if (n->localInactive && !n->peerActive) {
            // The peer lost it (its port to the host failed, or the host left): routed
            // on while it answers this leaf's probes, which then reach it here.
            if (kernel.ours) return peer("on ES " + mac->esi + ", kept while it answers probes");
            return no("inactive on both ES peers");
        }
        return peer("synced from the ES peer, on ES " + mac->esi);
    }
    // Not on a segment (a single-homed port), or not in FRR yet: the kernel decides.
    if (kernel.ours) return no("no longer synced by FRR");
    if (learnedHere(kernel)) return local("learned here");
    return no(kernel.present ? "not learned here" : "not in the kernel");
}

}  // namespace twinrail::hostrouted
