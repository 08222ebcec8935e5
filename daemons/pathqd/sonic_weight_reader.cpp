#include "sonic_weight_reader.h"

#include "sonic_weights.h"

namespace twinrail::pathqd {

namespace sw = sonic_weights;

struct SonicWeightReader::Read {
    Done done;
    int release = 0;
    int outstanding = 0;
    std::string error;  // the first failure; the read then ends without a result
    sw::SonicTables tables;
};

SonicWeightReader::SonicWeightReader(boost::asio::io_context& io, redis::Connection& applDb,
                                     redis::Connection* asicDb, redis::Connection* countersDb,
                                     int sonicRelease)
    : appl_(applDb), asic_(asicDb), counters_(countersDb), release_(sonicRelease), worker_(io) {}

PortWeights SonicWeightReader::frrWeightsOf(const std::vector<BgpPath>& paths) const {
    return frrWeights(paths, frrScaleOf(release_));
}

void SonicWeightReader::finishOne(const std::shared_ptr<Read>& r) {
    if (--r->outstanding > 0) return;
    if (!r->error.empty()) {
        r->done({}, r->error);
        return;
    }
    // The read is complete: its tables belong to the worker from here.
    auto tables = std::make_shared<const sw::SonicTables>(std::move(r->tables));
    worker_.run<ForwardedRead>(
        [tables, release = r->release] { return sw::forwardedOnSonic(*tables, release); },
        [done = std::move(r->done)](ForwardedRead read, std::string error) {
            done(std::move(read), std::move(error));
        });
}

void SonicWeightReader::hash(const std::shared_ptr<Read>& r, redis::Connection& db,
                             const std::string& key, sw::Row& into) {
    ++r->outstanding;
    bool sent = db.command({"HGETALL", key}, [this, r, &into, key](const redis::Value& v) {
        if (v.isError() || v.type != redis::Value::Type::Array) {
            if (r->error.empty())
                r->error = "HGETALL " + key + ": " + (v.isError() ? v.str : "not a hash");
        } else {
            for (size_t i = 0; i + 1 < v.elements.size(); i += 2)
                into[v.elements[i].str] = v.elements[i + 1].str;
        }
        finishOne(r);
    });
    if (!sent) {
        if (r->error.empty()) r->error = "redis not connected (" + key + ")";
        finishOne(r);
    }
}

void SonicWeightReader::scan(const std::shared_ptr<Read>& r, redis::Connection& db,
                             const std::string& pattern, sw::Rows& into,
                             const std::string& cursor) {
    ++r->outstanding;
    auto onReply = [this, r, &db, pattern, &into](const redis::Value& v) {
        bool shaped = !v.isError() && v.type == redis::Value::Type::Array &&
                      v.elements.size() == 2 && v.elements[1].type == redis::Value::Type::Array;
        if (!shaped) {
            if (r->error.empty())
                r->error = "SCAN " + pattern + ": " + (v.isError() ? v.str : "unexpected reply");
        } else if (r->error.empty()) {
            for (const auto& k : v.elements[1].elements)
                if (!into.count(k.str)) hash(r, db, k.str, into[k.str]);  // SCAN may repeat a key
            if (v.elements[0].str != "0") scan(r, db, pattern, into, v.elements[0].str);
        }
        finishOne(r);
    };
    if (!db.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, onReply)) {
        if (r->error.empty()) r->error = "redis not connected (SCAN " + pattern + ")";
        finishOne(r);
    }
}

void SonicWeightReader::read(Done done) {
    if (!appl_.connected()) {
        done({}, "APPL_DB: not connected");
        return;
    }
    auto r = std::make_shared<Read>();
    r->done = std::move(done);
    r->release = release_;
    ++r->outstanding;  // held until every command is sent, so no reply finishes it early
    scan(r, appl_, "ROUTE_TABLE:*", r->tables.applRoutes, "0");
    scan(r, appl_, "NEXTHOP_GROUP_TABLE:*", r->tables.nhgRows, "0");
    if (asic_ != nullptr && counters_ != nullptr && asic_->connected() && counters_->connected()) {
        auto& a = r->tables.asic.emplace();
        const std::string state = "ASIC_STATE:SAI_OBJECT_TYPE_";
        scan(r, *asic_, state + "ROUTE_ENTRY:*", a.routes, "0");
        scan(r, *asic_, state + "NEXT_HOP_GROUP_MEMBER:*", a.members, "0");
        scan(r, *asic_, state + "NEXT_HOP:*", a.nexthops, "0");
        scan(r, *asic_, state + "ROUTER_INTERFACE:*", a.rifs, "0");
        // Both maps land in one row: port and LAG names never collide (EthernetN, PortChannelN).
        hash(r, *counters_, "COUNTERS_PORT_NAME_MAP", a.portNames);
        hash(r, *counters_, "COUNTERS_LAG_NAME_MAP", a.portNames);
    }
    finishOne(r);
}

}  // namespace twinrail::pathqd
