// The whole check of a config_db.json document against the loaded YANG modules, as
// SONiC's `config reload` does it (sonic-utilities, since #3716): translate, validate,
// then refuse tables that have no model. Where SONiC stops at the first libyang error,
// this goes on: the row or field an error names is taken out and the rest validated
// again, so every error is listed (later ones may follow from earlier ones, as a
// compiler's do: a row taken out can leave a reference to it dangling).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/sonic/problem.h"
#include "twinrail/sonic/schema_model.h"
#include "twinrail/sonic/yang_context.h"

namespace twinrail::sonic {

struct CheckReport {
    std::vector<Problem> problems;                // translation, then libyang, each located
    std::vector<std::string> tablesWithoutModel;  // without "bgpraw", as config reload
    bool ok() const { return problems.empty() && tablesWithoutModel.empty(); }
    // sonic-utilities' words: "Config tables are missing yang models: dict_keys(['X'])".
    std::string missingModelsLine() const;
};

CheckReport checkConfigDb(const YangContext& yang, const SchemaModel& schema,
                          const nlohmann::json& configDb, std::size_t maxErrors = 100);

// The check of some tables only (a daemon's own), in the context of the whole document:
// problems and missing models of other tables are left out, and so is a reference into
// a table the document does not hold (a daemon's config file has no PORT table; the
// switch's CONFIG_DB does) -- each such reference is listed in `unchecked` instead.
struct TablesReport {
    CheckReport report;
    std::vector<std::string> unchecked;  // "UPLINK_PIN|Ethernet0: uplink: refers to PORT"
};
TablesReport checkTables(const YangContext& yang, const SchemaModel& schema,
                         const nlohmann::json& configDb, const std::vector<std::string>& tables);

// Where a libyang error is, in config_db.json terms: its path
// (/sonic-vlan:sonic-vlan/VLAN/VLAN_LIST[name='Vlan100']/mtu) gives table VLAN, key
// Vlan100, field mtu. A path without the row's keys (an error while parsing a key) is
// matched to the row by the value libyang quotes. Pure: no libyang here.
Problem locateError(const YangError& error, const SchemaModel& schema,
                    const nlohmann::json& configDb);

}  // namespace twinrail::sonic
