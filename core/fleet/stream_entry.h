// Reading the replies of Redis's stream commands (XREADGROUP, XAUTOCLAIM,
// XREAD) into entries: shared by the agent and the tuner's measurer.
#pragma once

#include <string>
#include <vector>

#include "fleet/redis_client.h"

namespace tessel::fleet {

struct StreamEntry {
  std::string id;
  std::string value;     // of the field asked for; empty if the entry has none
  bool deleted = false;  // pending but gone from the stream (nothing to read)
};

// The entries of an XREADGROUP or XREAD reply (one stream; Nil: none).
std::vector<StreamEntry> readEntries(const RedisReply& reply, const std::string& field);
// The entries an XAUTOCLAIM reply claimed (its second element).
std::vector<StreamEntry> claimedEntries(const RedisReply& reply, const std::string& field);
// XGROUP CREATE ... MKSTREAM, a group that exists already being no error.
void ensureGroup(RedisClient& redis, const std::string& stream, const std::string& group);

}  // namespace tessel::fleet
