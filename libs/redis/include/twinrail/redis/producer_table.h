// Writes a table of SONiC's APPL_DB the way SONiC's own producers do (swss-common's
// ProducerStateTable), so that an orch consuming it (ConsumerStateTable) sees each change:
// a set puts the key in <TABLE>_KEY_SET and its fields in the hash _<TABLE>:<key>, a delete
// also puts the key in <TABLE>_DEL_SET, and each publishes on <TABLE>_CHANNEL@<db id>. The
// consumer pops the key set, deletes the keys in the delete set, and moves _<TABLE>:<key>
// into <TABLE>:<key>. A plain HSET of <TABLE>:<key> would be seen by nobody. Each change
// is one MULTI/EXEC transaction.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

class ProducerTable {
  public:
    ProducerTable(Connection& client, std::string table, int dbId);
    // False (nothing sent) when not connected. `done` gets EXEC's reply.
    bool set(const std::string& key, const Fields& fields, ReplyHandler done = {});
    bool del(const std::string& key, ReplyHandler done = {});
    // The keys of the table as the consumer holds them: "<TABLE>:<prefix>*", read with
    // SCAN; `done` gets the keys without the table's name (empty and false on an error).
    void keysWithPrefix(const std::string& prefix,
                        const std::function<void(bool ok, std::vector<std::string>)>& done);

  private:
    void scanFrom(const std::string& cursor, const std::string& pattern,
                  const std::shared_ptr<std::vector<std::string>>& found,
                  const std::function<void(bool, std::vector<std::string>)>& done);
    Connection& client_;
    std::string table_;
    std::string channel_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // checked by SCAN replies
};

}  // namespace twinrail::redis
