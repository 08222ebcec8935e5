#include "wire.h"

namespace twinrail::telemetry::wire {
namespace {

// All ones is INT's "unavailable" marker (INT v2.1: "4 or 8 bytes of 0xFF"); applied
// per sub-field, so a saturated 24-bit occupancy next to a real queue id reads as
// "occupancy unknown, queue known".
template <typename T>
std::optional<T> avail(uint64_t v, uint64_t allOnes) {
    return v == allOnes ? std::nullopt : std::optional<T>(static_cast<T>(v));
}

}  // namespace

void readBits1To14(Reader& r, uint16_t bits, IntHop& h) {
    if (bitSet(bits, 1)) {
        h.ingressPort = avail<uint16_t>(r.u16(), 0xffff);
        h.egressPort = avail<uint16_t>(r.u16(), 0xffff);
    }
    if (bitSet(bits, 2)) h.hopLatency = avail<uint32_t>(r.u32(), 0xffffffffu);
    if (bitSet(bits, 3)) {
        h.queueId = avail<uint8_t>(r.u8(), 0xff);
        h.queueOccupancy = avail<uint32_t>(r.u24(), 0xffffff);
    }
    if (bitSet(bits, 4)) h.ingressTimestamp = avail<uint64_t>(r.u64(), ~uint64_t{0});
    if (bitSet(bits, 5)) h.egressTimestamp = avail<uint64_t>(r.u64(), ~uint64_t{0});
    if (bitSet(bits, 6)) {
        h.l2IngressIf = avail<uint32_t>(r.u32(), 0xffffffffu);
        h.l2EgressIf = avail<uint32_t>(r.u32(), 0xffffffffu);
    }
    if (bitSet(bits, 7)) h.egressTxUtil = avail<uint32_t>(r.u32(), 0xffffffffu);
    if (bitSet(bits, 8)) {
        h.bufferId = avail<uint8_t>(r.u8(), 0xff);
        h.bufferOccupancy = avail<uint32_t>(r.u24(), 0xffffff);
    }
    // Reserved in both formats; INT v2.1 lets a later minor version give them a 4-byte
    // meaning (an 8-byte one needs a new major version), so skipping 4 stays in step.
    for (int bit = 9; bit <= 14; ++bit) {
        if (bitSet(bits, bit)) r.skip(fieldBytes(bit));
    }
}

void writeBits1To14(std::vector<uint8_t>& out, uint16_t bits, const IntHop& h) {
    if (bitSet(bits, 1)) {
        put(out, h.ingressPort.value_or(0xffff), 2);
        put(out, h.egressPort.value_or(0xffff), 2);
    }
    if (bitSet(bits, 2)) put(out, h.hopLatency.value_or(0xffffffffu), 4);
    if (bitSet(bits, 3)) {
        put(out, h.queueId.value_or(0xff), 1);
        put(out, h.queueOccupancy.value_or(0xffffff), 3);
    }
    if (bitSet(bits, 4)) put(out, h.ingressTimestamp.value_or(~uint64_t{0}), 8);
    if (bitSet(bits, 5)) put(out, h.egressTimestamp.value_or(~uint64_t{0}), 8);
    if (bitSet(bits, 6)) {
        put(out, h.l2IngressIf.value_or(0xffffffffu), 4);
        put(out, h.l2EgressIf.value_or(0xffffffffu), 4);
    }
    if (bitSet(bits, 7)) put(out, h.egressTxUtil.value_or(0xffffffffu), 4);
    if (bitSet(bits, 8)) {
        put(out, h.bufferId.value_or(0xff), 1);
        put(out, h.bufferOccupancy.value_or(0xffffff), 3);
    }
    for (int bit = 9; bit <= 14; ++bit) {
        if (bitSet(bits, bit)) put(out, 0, 4);
    }
}

}  // namespace twinrail::telemetry::wire
