// One grammar for every name that twinrail reads from a config, a plan or Redis and then
// passes on: to the kernel, to vtysh (as part of a command line), to a file path or to a
// command's argument vector. A name that passes cannot carry a control character, white
// space, a shell or vtysh metacharacter, a path separator or "..", and is short enough for
// what it names. Every config reader, the planner and the plan reader check with it, so a
// hostile value is refused where it enters, naming the field, and never reaches FRR, a
// shell or a path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace twinrail::names {

enum class Kind {
    Interface,  // a kernel link: 1-15 chars (IFNAMSIZ - 1), [A-Za-z0-9_.-], first alnum
    // An Interface, or an fnmatch() glob over them: '*', '?' and '[...]' allowed as well
    // ("swp*", "Ethernet*", "swp[1-4]s?"), up to 63 characters. Globs only ever reach
    // fnmatch(), never a shell or vtysh; without a glob character it is an Interface.
    InterfacePattern,
    Node,      // a switch, server, NIC or lab name: 1-63 chars, [A-Za-z0-9_.-], first alnum
    RouteMap,  // an FRR route-map / prefix-list name: 1-63 chars, [A-Za-z0-9_.-], first alnum
};

std::string_view kindName(Kind kind);

// nullopt when `name` is a valid name of `kind`; else why not ("contains a control
// character at offset 4", "longer than 15 characters", ...), without the name itself, so
// the caller can say which field and where.
std::optional<std::string> check(std::string_view name, Kind kind);

inline bool valid(std::string_view name, Kind kind) {
    return !check(name, kind);
}

// `name` with every byte outside printable ASCII shown as \xNN: for error messages about a
// name that failed check(), so a log line cannot be forged or broken by the name itself.
std::string printable(std::string_view name, size_t max = 64);

}  // namespace twinrail::names
