// SQL the database and its stores share (internal to store/): the time a row
// is written, and which stored costs the readers use.
#pragma once

namespace tessel::store {

// The time a row is written: ISO 8601, UTC, to the millisecond.
inline constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

}  // namespace tessel::store

// A cost the readers use: positive and finite (9e999 is infinity to SQLite;
// NULL, an error record's cost, fails both tests). A file edited by hand or
// damaged may hold anything. Macros, to be joined to the literals of a query.
#define TESSEL_USABLE_COST "(cost > 0 AND cost < 9e999)"
#define TESSEL_KEEP_COST "CASE WHEN " TESSEL_USABLE_COST " THEN cost END"
