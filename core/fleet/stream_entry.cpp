#include "fleet/stream_entry.h"

namespace tessel::fleet {

namespace {

std::vector<StreamEntry> entriesOf(const RedisReply& list, const std::string& field) {
  std::vector<StreamEntry> out;
  for (const RedisReply& e : list.elements) {
    StreamEntry entry;
    entry.id = e[0].str;
    if (entry.id.empty()) continue;
    const RedisReply& fields = e[1];
    entry.deleted = fields.isNil();
    for (size_t i = 0; i + 1 < fields.elements.size(); i += 2)
      if (fields[i].str == field) entry.value = fields[i + 1].str;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

std::vector<StreamEntry> readEntries(const RedisReply& reply, const std::string& field) {
  if (!reply.isArray() || reply.elements.empty()) return {};
  return entriesOf(reply[0][1], field);  // [[stream, [entries]]]
}

std::vector<StreamEntry> claimedEntries(const RedisReply& reply, const std::string& field) {
  if (!reply.isArray()) return {};
  return entriesOf(reply[1], field);  // [cursor, [entries], [deleted ids]]
}

void ensureGroup(RedisClient& redis, const std::string& stream, const std::string& group) {
  const RedisReply r = redis.command({"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"});
  if (r.isError() && r.str.rfind("BUSYGROUP", 0) != 0)
    throw RedisError("Redis at " + redis.endpoint().str() + " refused to create the group of " + stream + ": " + r.str);
}

}  // namespace tessel::fleet
