#include "twinrail/lab/measure.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "twinrail/lab/process.h"

namespace twinrail::lab {
namespace {

constexpr int kFlows = 16;
constexpr int kIntervalUs = 2000;  // 500 packets/s per flow: 2 ms resolution
constexpr uint16_t kBasePort = 47000;

std::string lastLine(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty()) last = line;
    return last;
}

std::string addressOf(const plan::Plan& p, const std::string& nicNode) {
    for (const auto& s : p.servers) {
        for (const auto& n : s.nics)
            if (PlanLab::nicNode(s, n) == nicNode) return n.address;
    }
    throw std::invalid_argument("no NIC " + nicNode + " in the lab");
}

}  // namespace

nlohmann::json measureDuring(const std::string& labName, const LabBinaries& bins,
                             const std::vector<FlowPair>& pairs, const std::function<void()>& event,
                             int seconds) {
    const plan::Plan p = PlanLab::loadPlan(labName);
    const std::string dir = PlanLab::stateDir(labName);
    const std::string pre = PlanLab::nsPrefix(labName);
    const std::string ms = std::to_string(seconds * 1000);
    std::vector<ChildProcess> receivers, senders;
    for (size_t i = 0; i < pairs.size(); ++i) {
        std::string port = std::to_string(kBasePort + i);
        receivers.emplace_back(
            std::vector<std::string>{"ip", "netns", "exec", pre + pairs[i].to, bins.self,
                                     "flow-recv", port, std::to_string(kIntervalUs),
                                     std::to_string(seconds * 1000 + 3000)},
            dir + "/flow-recv-" + std::to_string(i) + ".log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // receivers bound
    for (size_t i = 0; i < pairs.size(); ++i) {
        senders.emplace_back(
            std::vector<std::string>{"ip", "netns", "exec", pre + pairs[i].from, bins.self,
                                     "flow-send", addressOf(p, pairs[i].to),
                                     std::to_string(kBasePort + i), std::to_string(kFlows),
                                     std::to_string(kIntervalUs), ms},
            dir + "/flow-send-" + std::to_string(i) + ".log");
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
    event();
    nlohmann::json out = nlohmann::json::array();
    for (auto& s : senders) s.wait(std::chrono::seconds(seconds + 10));
    for (size_t i = 0; i < pairs.size(); ++i) {
        receivers[i].wait(std::chrono::seconds(10));
        auto r = nlohmann::json::parse(lastLine(receivers[i].logPath()), nullptr, false);
        if (r.is_discarded()) r = {{"error", "no report: " + receivers[i].log()}};
        r["pair"] = pairs[i].from + " -> " + pairs[i].to;
        out.push_back(r);
        std::filesystem::remove(receivers[i].logPath());
        std::filesystem::remove(senders[i].logPath());
    }
    return out;
}

std::string describeMeasurement(const nlohmann::json& reports) {
    std::ostringstream o;
    for (const auto& r : reports) {
        o << "  " << r.value("pair", "?") << ": ";
        if (r.contains("error")) {
            o << "ERROR " << r["error"].get<std::string>() << "\n";
            continue;
        }
        o << r["flows_interrupted"].get<int>() << "/" << r["flows"].get<size_t>()
          << " flows interrupted, longest gap " << static_cast<long>(r["max_gap_ms"].get<double>())
          << " ms, " << r["lost"].get<uint64_t>() << " packets lost of "
          << r["received"].get<uint64_t>() + r["lost"].get<uint64_t>() << ", "
          << r["flows_not_recovered"].get<int>() << " flows not recovered\n";
    }
    return o.str();
}

}  // namespace twinrail::lab
