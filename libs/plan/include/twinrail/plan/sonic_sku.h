// A SONiC HWSKU as the planner needs it: the ports of port_config.ini (and the breakout
// modes of hwsku.json), the plan's swp<n>[s<lane>] ports mapped onto its EthernetN names
// (breakouts included), and the factory-default config_db.json a switch of that SKU has.
// Pure: the texts come in as strings (the tool reads the files). Input is hostile: every
// error names the file, and the line and column (port_config.ini, JSON syntax) or the key.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {

struct SkuPort {
    std::string name;  // EthernetN
    int number = 0;    // N
    std::vector<int> lanes;
    std::string alias;
    int index = -1;      // physical port (front-panel) index; rows sharing it are one cage
    long speedMbps = 0;  // 0 when the file has no speed column
    std::map<std::string, std::string> extra;  // fec, autoneg, subport, mtu, admin_status
    bool operator==(const SkuPort&) const = default;
};

// A breakout mode "<count>x<speed>G", optionally with the speeds it may also run at:
// "1x800G[400G,200G]".
struct BreakoutMode {
    int count = 1;
    int speedGbps = 0;
    std::vector<int> altSpeedsGbps;
    std::string text;
    bool operator==(const BreakoutMode&) const = default;
};

struct Sku {
    std::string name;                                  // the HWSKU directory's name
    std::vector<SkuPort> ports;                        // in port_config.ini order
    std::map<std::string, BreakoutMode> defaultModes;  // hwsku.json, by port name
};

// One front-panel port: the rows of port_config.ini that share its index.
struct PhysicalPort {
    int ordinal = 1;  // 1-based, in index order: the plan's swp<ordinal>
    int index = 0;
    std::vector<const SkuPort*> rows;  // by EthernetN number
    int laneCount() const;
    long speedMbps() const;  // the cage's total
    const SkuPort& base() const { return *rows.front(); }
};

struct SkuError {
    std::string message;  // "<file>:<line>:<column>: ..." or "<file>: <key>: ..."
};

std::variant<std::vector<SkuPort>, SkuError> parsePortConfigIni(const std::string& text,
                                                                const std::string& file);
std::variant<std::map<std::string, BreakoutMode>, SkuError> parseHwskuJson(
    const std::string& text, const std::string& file, const std::vector<SkuPort>& ports);
std::variant<BreakoutMode, std::string> parseBreakoutMode(const std::string& text);
// Both files into a Sku (hwskuJson empty: no hwsku.json). A default_brkout_mode must
// describe the cage as port_config.ini has it (count and total speed), or it is refused.
std::variant<Sku, SkuError> skuFromTexts(const std::string& name, const std::string& portConfigIni,
                                         const std::string& iniFile, const std::string& hwskuJson,
                                         const std::string& jsonFile);

// The front-panel ports, ordered by index (rows without an index column: one per row).
std::vector<PhysicalPort> physicalPorts(const Sku& sku);

// The plan's ports on a switch of this SKU.
struct PortMap {
    std::map<std::string, std::string> names;  // swp1s0 -> Ethernet0
    // Cages whose mode the plan needs but the SKU does not have: base port -> mode
    // (BREAKOUT_CFG rows; SONiC's dynamic port breakout creates the derived names).
    std::map<std::string, BreakoutMode> breakouts;
};
std::variant<PortMap, std::string> mapPorts(const Sku& sku, const Switch& sw);

// The ports a cage has in `mode`: SONiC's breakout naming (Ethernet<base + k * lanes /
// count>, each with lanes/count of the cage's lanes, aliases <alias stem><a, b, ...>).
std::variant<std::vector<SkuPort>, std::string> breakoutPorts(const PhysicalPort& cage,
                                                              const BreakoutMode& mode);

// The config_db.json of a factory-default switch of this SKU: PORT rows (lanes, alias,
// index, speed, admin_status and the SKU's other port columns) with `breakouts` applied,
// and DEVICE_METADATA|localhost with placeholders for what the box itself fills in.
nlohmann::json sonicBaseConfigDb(const Sku& sku,
                                 const std::map<std::string, BreakoutMode>& breakouts = {});
// The BREAKOUT_CFG rows of an overlay, to build the base it is merged onto.
std::map<std::string, BreakoutMode> breakoutsOf(const nlohmann::json& overlay);

}  // namespace twinrail::plan
