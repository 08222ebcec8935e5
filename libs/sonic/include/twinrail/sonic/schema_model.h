// The part of a compiled YANG schema that translating config_db.json needs, as plain
// data: which module holds which CONFIG_DB table, each table's lists (with their key
// leaves in order) and fixed-key containers, and each leaf's JSON encoding. Built from
// libyang by YangContext::schemaModel(); tests build it by hand, so the translator is
// tested without libyang.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::sonic {

// How RFC 7951 (as libyang 2.1 reads it) wants a leaf's value written.
enum class JsonKind {
    String,         // string, enumeration, int64/uint64/decimal64, identityref, bits...
    Number,         // int8..int32, uint8..uint32: a JSON number
    Boolean,        // true/false
    Empty,          // [null]
    NumberOrString  // a union with a 8..32-bit integer member: a number when it parses
};

struct SchemaNode {
    enum class Kind { Container, List, Leaf, LeafList };
    Kind kind = Kind::Leaf;
    std::string name;
    JsonKind json = JsonKind::String;  // leaves and leaf-lists
    std::vector<std::string> keys;     // lists: the key leaves, in order
    std::vector<SchemaNode> children;  // containers and lists (choice/case flattened)

    const SchemaNode* child(const std::string& childName) const;
    std::vector<const SchemaNode*> childrenOf(Kind k) const;
};

// One CONFIG_DB table: a child container of the module's top-level container.
struct TableModel {
    std::string module;  // "sonic-vlan"
    std::string top;     // the top-level container, named like the module
    SchemaNode container;
};

struct SchemaModel {
    std::map<std::string, TableModel> tables;  // by CONFIG_DB table name

    const TableModel* table(const std::string& name) const;
    // The top-level container of a module ("sonic-vlan:sonic-vlan"), for YANG-JSON input.
    std::optional<std::string> tableOfQualified(const std::string& module,
                                                const std::string& container) const;
};

}  // namespace twinrail::sonic
