#include "twinrail/ars/datapath.h"

namespace twinrail::ars {

const char* assignModeName(AssignMode m) {
    switch (m) {
        case AssignMode::FlowletQuality:
            return "flowlet-quality";
        case AssignMode::FlowletRandom:
            return "flowlet-random";
        case AssignMode::PacketQuality:
            return "per-packet-quality";
        case AssignMode::PacketRandom:
            return "per-packet-random";
    }
    return "unknown";  // a value outside the enum: said, not undefined
}

}  // namespace twinrail::ars
