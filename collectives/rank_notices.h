// How the collectives' launchers tell every host that a rank has ended (system/host_notices.h):
// one channel per launched collective, each notice saying which rank and whether it ended well;
// the handler gets the rank's own end time.
#pragma once

#include <cstdint>
#include <functional>

#include "hw/system/host_notices.h"

namespace podsim::collectives {

using RankEnded = std::function<void(int rank, bool ok, core::TimePs end)>;

inline std::uint64_t open_rank_channel(system::HostNotices& notices, RankEnded ended) {
  return notices.open([ended = std::move(ended)](const system::Notice& n) {
    ended(static_cast<int>(n.value / 2), n.value % 2 == 1, n.sent_ps);
  });
}

// From rank `rank`'s host (on `chip`), now.
inline void post_rank_end(system::HostNotices& notices, std::uint64_t channel, int chip, int rank,
                          bool ok, core::TimePs delay_ps) {
  notices.post(channel, chip, static_cast<std::uint32_t>(rank) * 2 + (ok ? 1 : 0), delay_ps);
}

}  // namespace podsim::collectives
