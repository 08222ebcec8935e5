// FRR as a fake channel: a running config kept as a tree and rendered as FRR shows it (one
// space of indent per level), so Channel::ensure's real logic runs against it; vtysh
// configuration batches ("-c configure terminal -c <context>... -c <line> -c end") edit
// the tree ("no <line>" removes it), and commands outside configuration mode (clear bgp)
// leave it alone. zebra's vty answers from a map a test fills. Every answer is posted on the
// io_context, as the real channel's are. restart() plays an FRR daemon (re)starting;
// loseConfig() is what FRR forgets then (lines added at run time).
#pragma once

#include <boost/asio/post.hpp>
#include <map>
#include <string>
#include <vector>

#include "twinrail/frr/channel.h"

namespace twinrail::fakes {

class FakeFrr final : public frr::Channel {
  public:
    explicit FakeFrr(boost::asio::io_context& io) : io_(io) {}

    void run(std::vector<std::string> args, ProcessCallback done) override {
        runs.push_back(args);
        ProcessResult r;
        for (const auto& a : args) {
            if (auto why = frr::checkCommandLine(a)) {
                r.err = "refused: " + *why;
                return post([done = std::move(done), r] { done(r); });
            }
        }
        r.exitCode = reachable ? 0 : 1;
        if (reachable) {
            applyBatch(args);
        } else {
            r.err = "vtysh: failed to connect to any daemons";
        }
        post([done = std::move(done), r] { done(r); });
    }
    void show(const std::string& command, Done done) override {
        shows.push_back(command);
        auto it = showAnswers.find(command);
        bool ok = reachable && it != showAnswers.end();
        std::string text = ok ? it->second : "% Unknown command: " + command;
        post([done = std::move(done), ok, text] { done(ok, text); });
    }
    void showRunning(Done done) override {
        bool ok = reachable;
        std::string text = ok ? render() : "vtysh: failed to connect to any daemons";
        post([done = std::move(done), ok, text] { done(ok, text); });
    }
    void zebra(std::string command, Done done) override {
        zebraCommands.push_back(command);
        auto it = zebraAnswers.find(command);
        bool ok = reachable && it != zebraAnswers.end();
        std::string text = ok ? it->second : "zebra.vty: connection refused";
        post([done = std::move(done), ok, text] { done(ok, text); });
    }
    void setZebraSocket(std::string path) override { zebraSocket = std::move(path); }
    void watchRestarts(RestartHandler handler) override { restartHandler_ = std::move(handler); }
    void stopWatching() override { restartHandler_ = nullptr; }
    std::string describe() const override { return "fake FRR"; }

    // FRR's config as text (each entry one line with its context), e.g.
    // configure({"router bgp 65101", "address-family ipv4 unicast", "redistribute table 10"}).
    void configure(const std::vector<std::string>& path) {
        Node* n = &root_;
        for (const auto& p : path) n = &n->child(p);
    }
    bool has(const std::vector<std::string>& path) const {
        const Node* n = &root_;
        for (const auto& p : path) {
            n = n->find(p);
            if (n == nullptr) return false;
        }
        return true;
    }
    // What FRR keeps over a restart: only what `keep` says (its saved config).
    void loseConfig() { root_ = {}; }
    void restart(const std::string& daemon) {
        if (restartHandler_) restartHandler_(daemon);
    }
    bool watching() const { return static_cast<bool>(restartHandler_); }

    bool reachable = true;
    std::map<std::string, std::string> showAnswers;
    std::map<std::string, std::string> zebraAnswers;
    std::vector<std::vector<std::string>> runs;
    std::vector<std::string> shows, zebraCommands;
    std::string zebraSocket;

  private:
    struct Node {
        std::string line;
        std::vector<Node> children;  // a vector may hold its own incomplete type
        Node& child(const std::string& text) {
            for (auto& n : children)
                if (n.line == text) return n;
            children.push_back(Node{text, {}});
            return children.back();
        }
        const Node* find(const std::string& text) const {
            for (const auto& n : children)
                if (n.line == text) return &n;
            return nullptr;
        }
    };
    template <typename F>
    void post(F f) {
        boost::asio::post(io_, std::move(f));
    }
    void applyBatch(const std::vector<std::string>& args) {
        std::vector<std::string> lines;
        for (size_t i = 0; i + 1 < args.size(); i += 2)
            if (args[i] == "-c") lines.push_back(args[i + 1]);
        std::vector<std::string> path;
        auto commit = [this, &path] {
            if (!path.empty() && path.back().rfind("no ", 0) == 0) {
                unconfigure(path);
            } else if (!path.empty()) {
                configure(path);
            }
            path.clear();
        };
        bool configuring = false;
        for (const auto& line : lines) {
            if (line == "configure terminal" || line == "end") {
                commit();
                configuring = line != "end";
            } else if (configuring) {
                path.push_back(line);
            }  // else an exec command (clear bgp ... soft in): no configuration
        }
        commit();
    }
    // "no X" under its context removes X and, as FRR does for `no route-map NAME`, every
    // line X heads ("route-map NAME permit 10").
    void unconfigure(const std::vector<std::string>& path) {
        Node* n = &root_;
        for (size_t i = 0; i + 1 < path.size() && n != nullptr; ++i) {
            Node* next = nullptr;
            for (auto& child : n->children)
                if (child.line == path[i]) next = &child;
            n = next;
        }
        if (n == nullptr) return;
        const std::string target = path.back().substr(3);
        std::erase_if(n->children, [&target](const Node& c) {
            return c.line == target || c.line.rfind(target + " ", 0) == 0;
        });
    }
    static void renderNode(const Node& n, int depth, std::string& out) {
        for (const auto& child : n.children) {
            out += std::string(static_cast<size_t>(depth), ' ') + child.line + "\n";
            renderNode(child, depth + 1, out);
            if (depth == 0) out += "exit\n!\n";
        }
    }
    std::string render() const {
        std::string out =
            "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n!\n";
        renderNode(root_, 0, out);
        return out + "end\n";
    }

    boost::asio::io_context& io_;
    Node root_;
    RestartHandler restartHandler_;
};

}  // namespace twinrail::fakes
