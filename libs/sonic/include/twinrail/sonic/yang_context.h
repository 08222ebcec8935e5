// libyang's context for SONiC's YANG modules (and twinrail's), owned in one object: load
// the modules of one or more directories, describe the tables they define as a
// SchemaModel, and validate YANG-JSON the way SONiC's sonic_yang does (parse strict,
// state data refused, every loaded module validated, not only those with data).
//
// Every call here switches libyang's (process-wide) log options to "store, do not
// print" for its own duration and restores them after: libyang's warnings about SONiC's
// modules never reach stderr, and its errors come back as YangError. One thread at a
// time may use libyang in a process (twinrail's daemons and CLI have one).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/sonic/schema_model.h"

struct ly_ctx;

namespace twinrail::sonic {

// One libyang error: its message and the data (or schema) path it names.
struct YangError {
    std::string message;
    std::string path;
    // As libyang-python words it, which SONiC's tests match against:
    // "<message>: Data path: <path>".
    std::string str() const { return path.empty() ? message : message + ": Data path: " + path; }
};

class YangContext {
  public:
    YangContext();  // throws std::runtime_error when libyang cannot make a context
    ~YangContext();
    YangContext(const YangContext&) = delete;
    YangContext& operator=(const YangContext&) = delete;

    // Loads every *.yang file of `dir` (in name order) and makes the directory a search
    // path for imports. A module already loaded from an earlier directory is skipped (the
    // first directory wins, like a search path). Returns one line per file that did not
    // load ("path: libyang's message"); an unreadable directory is one such line.
    std::vector<std::string> loadDirectory(const std::string& dir);

    // The names of the modules loaded from the directories, in load order.
    const std::vector<std::string>& modules() const { return modules_; }

    // Which module holds which CONFIG_DB table, walked from the compiled schema.
    SchemaModel schemaModel() const;

    // Parses and validates RFC 7951 YANG-JSON. libyang 2.1 stops at the first error, so
    // this returns the errors of that one failure (usually one); empty when valid.
    std::vector<YangError> validate(const nlohmann::json& yangJson) const;

    // The data node at `xpath` of the validated YANG-JSON, printed as JSON with its
    // siblings and their defaults (as SONiC's tests "verify" a value); null when the
    // data does not validate or nothing is there.
    nlohmann::json nodeWithSiblings(const nlohmann::json& yangJson, const std::string& xpath) const;

  private:
    ly_ctx* ctx_ = nullptr;
    std::vector<std::string> modules_;
};

}  // namespace twinrail::sonic
