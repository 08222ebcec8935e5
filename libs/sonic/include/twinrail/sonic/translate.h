// config_db.json -> RFC 7951 YANG-JSON, by SONiC's rules (sonic-yang-mgmt's
// sonic_yang_ext.py), driven by the schema model, never by a list of tables:
// - a table goes to its module's top container: {"sonic-vlan:sonic-vlan":
//   {"sonic-vlan:VLAN": {...}}};
// - a row whose key names a child container of the table ("localhost", "global") fills
//   that container; any other row is an entry of the table's list: the key is split on
//   '|' onto the list's key leaves in order (a table with several lists takes the first
//   whose number of key leaves matches, as INTERFACE and INTERFACE_IPPREFIX do);
// - a list holding an inner list is one of SONiC's "type 1" maps (DSCP_TO_TC_MAP): each
//   field "k": "v" becomes an inner entry {key: k, value: v};
// - a field takes the JSON type libyang wants: 8..32-bit integers as numbers, booleans
//   as true/false, empty as [null]; a leaf-list given as a string is split on ','
//   (';' for NTP src_intf, as SONiC does); "NULL": "NULL" (a placeholder for a row
//   without fields) is dropped;
// - a table without a model is not translated but listed, for the missing-model report.
// Hostile input gets a Problem naming table, key and field; the rest is still translated.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/sonic/problem.h"
#include "twinrail/sonic/schema_model.h"

namespace twinrail::sonic {

struct Translation {
    nlohmann::json yang = nlohmann::json::object();
    std::vector<Problem> problems;
    std::vector<std::string> tablesWithoutModel;  // in document order
};

Translation translateConfigDb(const nlohmann::json& configDb, const SchemaModel& schema);

// For YANG-JSON written with strings for every value (SONiC's own test cases, read by
// libyang 3 with LYD_PARSE_JSON_STRING_DATATYPES, which libyang 2.1 lacks): turns the
// strings of number and boolean leaves into JSON numbers and booleans, by the schema.
nlohmann::json coerceStringDatatypes(const nlohmann::json& yangJson, const SchemaModel& schema);

}  // namespace twinrail::sonic
