// A SONiC HWSKU as the planner needs it: the ports of port_config.ini, the default breakout
// modes of hwsku.json, the breakout modes platform.json offers (the only ones `config
// interface breakout` accepts) and the lossless profiles pg_profile_lookup.ini has (the only
// cable lengths buffermgrd builds a lossless PG for); the plan's swp<n>[s<lane>] ports
// mapped onto its EthernetN names (breakouts included), and the factory-default
// config_db.json a switch of that SKU has.
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

// A breakout mode "<count>x<speed>G", optionally with the speeds it may also run at and
// the lanes it uses: "1x800G[400G,200G]", "4x25G[10G](4)". `text` is the mode as written:
// platform.json's key, which is what DPB takes.
struct BreakoutMode {
    int count = 1;
    int speedGbps = 0;
    std::vector<int> altSpeedsGbps;
    int lanes = 0;  // "(N)": the lanes the mode uses; 0 = all of the cage's
    std::string text;
    bool operator==(const BreakoutMode&) const = default;
    bool runsAt(int gbps) const;  // the default speed or one of the alternatives
};

// pg_profile_lookup.ini: for each port speed (Mb/s), the cable lengths (m) with a lossless
// profile. buffermgrd (traditional model) builds pg_lossless_<speed>_<cable>_profile only
// for these; a header-only file has none.
struct PgProfileLookup {
    bool present = false;                            // the SKU directory has the file
    std::string file;                                // for messages
    std::map<long, std::vector<int>> cablesBySpeed;  // sorted, no duplicates
};

struct Sku {
    std::string name;                                  // the HWSKU directory's name
    std::vector<SkuPort> ports;                        // in port_config.ini order
    std::map<std::string, BreakoutMode> defaultModes;  // hwsku.json, by port name
    // platform.json interfaces.<port>.breakout_modes, by the cage's first port; empty when
    // there is no platform.json.
    std::map<std::string, std::vector<BreakoutMode>> platformModes;
    std::string platformFile;  // where they came from ("" = no platform.json)
    PgProfileLookup pgLookup;
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
// platform.json's breakout modes, by port (keys that are not a plain mode, such as mixed
// "1x400G(4)+2x200G(4)", are skipped: a plan never asks for them).
std::variant<std::map<std::string, std::vector<BreakoutMode>>, SkuError> parsePlatformJson(
    const std::string& text, const std::string& file);
std::variant<PgProfileLookup, SkuError> parsePgProfileLookup(const std::string& text,
                                                             const std::string& file);
// The files of a HWSKU directory, as texts (empty: the file is not there).
struct SkuTexts {
    std::string name;
    std::string portConfigIni, iniFile;
    std::string hwskuJson, jsonFile;
    std::string platformJson, platformFile;
    std::string pgLookup, pgLookupFile;
};
std::variant<Sku, SkuError> skuFromFiles(const SkuTexts& texts);
// Both files into a Sku (hwskuJson empty: no hwsku.json). A default_brkout_mode must
// describe the cage as port_config.ini has it (count and total speed), or it is refused.
std::variant<Sku, SkuError> skuFromTexts(const std::string& name, const std::string& portConfigIni,
                                         const std::string& iniFile, const std::string& hwskuJson,
                                         const std::string& jsonFile);

// The front-panel ports, ordered by index (rows without an index column: one per row).
std::vector<PhysicalPort> physicalPorts(const Sku& sku);

// A cage the plan needs in another mode than the SKU ships: the platform.json mode to give
// `config interface breakout`, and the speed the plan runs its ports at (the mode's
// default, or one of its alternatives, then set with `config interface speed`).
struct Breakout {
    BreakoutMode mode;
    int speedGbps = 0;
    bool operator==(const Breakout&) const = default;
};

// The plan's ports on a switch of this SKU.
struct PortMap {
    std::map<std::string, std::string> names;  // swp1s0 -> Ethernet0
    // Base port -> breakout; SONiC's dynamic port breakout creates the derived names.
    std::map<std::string, Breakout> breakouts;
};
std::variant<PortMap, std::string> mapPorts(const Sku& sku, const Switch& sw);

// The ports a cage has in `mode`: SONiC's breakout naming (Ethernet<base + k * lanes /
// count>, each with lanes/count of the cage's lanes, aliases <alias stem><a, b, ...>).
std::variant<std::vector<SkuPort>, std::string> breakoutPorts(const PhysicalPort& cage,
                                                              const Breakout& breakout);

// A port's PORT row as sonic-cfggen writes it from port_config.ini: lanes, alias, index,
// speed, admin_status up, and any other column as it is.
nlohmann::json sonicPortRow(const SkuPort& port);

// The config_db.json of a factory-default switch of this SKU: PORT rows (lanes, alias,
// index, speed, admin_status and the SKU's other port columns) and BREAKOUT_CFG, with
// `breakouts` applied as DPB leaves them, and DEVICE_METADATA|localhost with placeholders
// for what the box itself fills in.
nlohmann::json sonicBaseConfigDb(const Sku& sku,
                                 const std::map<std::string, Breakout>& breakouts = {});

}  // namespace twinrail::plan
