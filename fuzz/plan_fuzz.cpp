// The plan file reader (twinrail-lab up --plan, twinrail-plan --from) on any JSON
// document. Checks: nothing throws or overflows, a rejection says why, every name of an
// accepted plan passes the one name grammar (twinrail/common/names.h: plan names become
// namespaces, paths, interfaces and command arguments), and an accepted plan written back
// with toJson() reads back as the same plan and the same JSON.
#include <nlohmann/json.hpp>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/common/names.h"
#include "twinrail/plan/plan.h"

using nlohmann::json;
using twinrail::fuzz::check;
namespace plan = twinrail::plan;
namespace names = twinrail::names;

namespace {

void checkName(const std::string& name, names::Kind kind, const char* what) {
    check(names::valid(name, kind), what);
}

// Every name the plan holds, as the reader promises it.
void checkNames(const plan::Plan& p) {
    using K = names::Kind;
    checkName(p.request.leafModel.name, K::Node, "a leaf model name outside the grammar");
    checkName(p.request.spineModel.name, K::Node, "a spine model name outside the grammar");
    for (const auto& sw : p.switches) {
        checkName(sw.name, K::Node, "a switch name outside the grammar");
        for (const auto& port : sw.ports) {
            checkName(port.name, K::Interface, "a switch port name outside the grammar");
            checkName(port.peerPort, K::Interface, "a peer port name outside the grammar");
            if (!port.pinnedUplink.empty())
                checkName(port.pinnedUplink, K::Interface, "a pinned uplink outside the grammar");
            auto slash = port.peer.find('/');
            checkName(port.peer.substr(0, slash), K::Node, "a peer name outside the grammar");
            if (slash != std::string::npos)
                checkName(port.peer.substr(slash + 1), K::Node, "a peer NIC outside the grammar");
        }
    }
    for (const auto& srv : p.servers) {
        checkName(srv.name, K::Node, "a server name outside the grammar");
        for (const auto& nic : srv.nics) {
            checkName(nic.name, K::Node, "a NIC name outside the grammar");
            for (const auto& np : nic.ports) {
                checkName(np.name, K::Interface, "a NIC port name outside the grammar");
                checkName(np.leaf, K::Node, "a NIC port's leaf outside the grammar");
                checkName(np.leafPort, K::Interface, "a NIC port's leaf port outside the grammar");
            }
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    json doc = json::parse(data, data + size, nullptr, false);
    if (doc.is_discarded()) return 0;
    auto read = plan::planFromJson(doc);
    if (const auto* err = std::get_if<plan::SizingError>(&read)) {
        check(!err->message.empty(), "a plan rejected without a reason");
        return 0;
    }
    const auto& p = std::get<plan::Plan>(read);
    checkNames(p);
    json written = plan::toJson(p);
    auto again = plan::planFromJson(written);
    const auto* p2 = std::get_if<plan::Plan>(&again);
    check(p2 != nullptr, "a plan written back from an accepted one is rejected");
    check(*p2 == p, "a plan written back reads differently");
    check(plan::toJson(*p2) == written, "toJson is not stable");
    return 0;
}
