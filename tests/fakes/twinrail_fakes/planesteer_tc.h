// tc as planesteer drives it, as a fake: a CommandRunner for changes and an OutputReader
// for `tc -j filter show`, over a small model of each bond's egress filters (other prefs,
// the pin table, its root node, its pins). Every argv is recorded. A command takes effect
// when it is answered: at once on the loop, or, while `hold` is set, only when the test
// releases it (a slow or stuck tc). `fail` makes a command fail (its exit code), and
// `applyAnyway` makes such a failure take effect all the same (tc killed by its timeout
// after the kernel did the work).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tc_pins.h"
#include "twinrail/common/command_runner.h"

namespace twinrail::fakes {

class FakeTc final : public CommandRunner {
  public:
    struct Egress {
        std::set<int> prefs;  // filters that are not the pin table (leftovers, the lab's)
        bool table = false;   // handle 1: at pref 100
        bool root = false;    // the node that hashes into it
        std::map<std::string, std::pair<std::string, std::string>> nodes;  // handle: peer, port
    };

    explicit FakeTc(boost::asio::io_context& io) : io_(io) {}

    void run(std::vector<std::string> argv,
             std::function<void(int exitCode, std::string err)> done) override {
        enqueue(std::move(argv), std::move(done));
    }
    planesteer::OutputReader reader() {
        return [this](std::vector<std::string> argv,
                      std::function<void(int exitCode, std::string out)> done) {
            enqueue(std::move(argv), std::move(done));
        };
    }

    // Answers the oldest command waiting; false when none is.
    bool release() {
        if (waiting_.empty()) return false;
        auto w = std::move(waiting_.front());
        waiting_.pop_front();
        int code = fail ? fail(w.argv) : 0;
        std::string out = code == 0 || applyAnyway ? apply(w.argv, code) : "";
        if (code != 0 && out.empty()) out = "fake tc: refused";
        w.done(code, out);
        return true;
    }
    size_t waiting() const { return waiting_.size(); }

    // The pins of a bond as the kernel has them: peer -> port.
    std::map<std::string, std::string> pins(const std::string& bond) const {
        std::map<std::string, std::string> out;
        if (auto it = devs.find(bond); it != devs.end())
            for (const auto& [h, pin] : it->second.nodes) out[pin.first] = pin.second;
        return out;
    }
    // The bond's clsact deleted and made again: every filter of ours is gone, silently.
    void dropTable(const std::string& bond) { devs[bond] = Egress{}; }

    // Commands recorded, as one line each (the program's path first).
    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        for (const auto& argv : runs) {
            std::string line;
            for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
            out.push_back(line);
        }
        return out;
    }

    bool hold = false;
    std::function<int(const std::vector<std::string>&)> fail;
    bool applyAnyway = false;
    std::map<std::string, Egress> devs;
    std::vector<std::vector<std::string>> runs;

  private:
    struct Waiting {
        std::vector<std::string> argv;
        std::function<void(int, std::string)> done;
    };

    void enqueue(std::vector<std::string> argv, std::function<void(int, std::string)> done) {
        runs.push_back(argv);
        waiting_.push_back({std::move(argv), std::move(done)});
        if (!hold) boost::asio::post(io_, [this] { release(); });
    }

    static std::string after(const std::vector<std::string>& argv, const std::string& key) {
        for (size_t i = 0; i + 1 < argv.size(); ++i)
            if (argv[i] == key) return argv[i + 1];
        return "";
    }
    static bool has(const std::vector<std::string>& argv, const std::string& word) {
        for (const auto& a : argv)
            if (a == word) return true;
        return false;
    }

    // The command's effect on the model; its stdout (show), or "" and `code` set to what
    // tc would exit with when the model refuses it.
    std::string apply(const std::vector<std::string>& argv, int& code) {
        Egress& e = devs[after(argv, "dev")];
        std::string handle = after(argv, "handle");
        auto refuse = [&code] {
            code = 2;
            return std::string("fake tc: not found");
        };
        if (has(argv, "show")) {
            auto j = nlohmann::json::array();
            for (int p : e.prefs) j.push_back({{"pref", p}, {"kind", "u32"}});
            if (e.table) j.push_back({{"pref", 100}, {"options", {{"fh", "1:"}}}});
            return j.dump();
        }
        if (has(argv, "get")) {
            bool there = handle == "1:" ? e.table : e.nodes.count(handle) > 0;
            return there ? "filter " + handle : refuse();
        }
        if (has(argv, "del") && handle.empty()) {
            int pref = std::stoi(after(argv, "pref"));
            if (pref == 100 && e.table) {
                e.table = e.root = false;
                e.nodes.clear();
                e.prefs.erase(pref);
                return "";
            }
            return e.prefs.erase(pref) > 0 ? "" : refuse();
        }
        if (has(argv, "del")) return e.nodes.erase(handle) > 0 ? "" : refuse();
        if (has(argv, "add") && has(argv, "divisor")) {
            if (e.table) return refuse();
            e.table = true;
            return "";
        }
        if (has(argv, "add") && has(argv, "link")) {
            if (!e.table) return refuse();
            e.root = true;
            return "";
        }
        if (has(argv, "replace")) {
            if (!e.table) return refuse();
            std::string dst = after(argv, "dst");
            e.nodes[handle] = {dst.substr(0, dst.find('/')), argv.back()};
            return "";
        }
        return refuse();
    }

    boost::asio::io_context& io_;
    std::deque<Waiting> waiting_;
};

}  // namespace twinrail::fakes
