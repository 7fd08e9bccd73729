// Host notices: handled at their due time, in the order of the chips that sent them whatever the
// order they were posted or handed over in, so one process and several run them alike.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "hw/system/host_notices.h"

namespace podsim::system {
namespace {

struct Seen {
  int chip;
  std::uint32_t value;
  core::TimePs sent, handled;
};

// Posts `value` from `chip` at `at`, through a callback of the event queue.
class PostAt : public core::Timed {
 public:
  PostAt(HostNotices& notices, std::uint64_t channel) : notices_(notices), channel_(channel) {}
  void at(core::TimePs when, int chip, std::uint32_t value) {
    posts_.push_back({chip, value});
    core::event_queue().schedule(when, *this, static_cast<std::uint32_t>(posts_.size() - 1));
  }
  void fire(std::uint32_t tag) override {
    notices_.post(channel_, posts_[tag].first, posts_[tag].second, 1000);
  }

 private:
  HostNotices& notices_;
  std::uint64_t channel_;
  std::vector<std::pair<int, std::uint32_t>> posts_;
};

TEST(HostNotices, TakeEffectADelayLaterInTheOrderOfTheirChips) {
  HostNotices notices("notices", core::event_queue(), 4);
  std::vector<Seen> seen;
  const auto channel = notices.open([&](const Notice& n) {
    seen.push_back({n.chip, n.value, n.sent_ps, core::now_ps()});
  });
  PostAt post(notices, channel);
  post.at(500, 3, 30);  // due at 1500
  post.at(700, 1, 10);  // due at 1700
  post.at(200, 2, 20);  // due at 1200
  post.at(500, 0, 0);   // due at 1500, before chip 3's though posted after it
  core::run_to_completion();
  ASSERT_EQ(seen.size(), 4u);
  const std::vector<int> chips = {seen[0].chip, seen[1].chip, seen[2].chip, seen[3].chip};
  EXPECT_EQ(chips, (std::vector<int>{2, 0, 3, 1}));
  for (const Seen& s : seen) EXPECT_EQ(s.handled, s.sent + 1000) << "chip " << s.chip;
  EXPECT_EQ(notices.posted(), 4u);
}

// A notice handed over from another process takes the place its key gives it, not the place of
// when it was handed over (here before the local one due at the same time was even posted).
TEST(HostNotices, AForeignNoticeTakesItsPlaceByKey) {
  HostNotices notices("notices", core::event_queue(), 4);
  std::vector<int> order;
  std::vector<Notice> forwarded;
  notices.forward_to([&](const Notice& n) { forwarded.push_back(n); });
  const auto channel = notices.open([&](const Notice& n) { order.push_back(n.chip); });
  PostAt post(notices, channel);
  post.at(100, 2, 0);
  core::run_to_completion();  // learns chip 2's key and due time
  ASSERT_EQ(forwarded.size(), 1u);
  Notice foreign = forwarded[0];
  foreign.chip = 3;
  foreign.key += 64;  // chip 3's first key
  foreign.due_ps += 5000;
  Notice local_twin = forwarded[0];
  post.at(core::now_ps() + 4000, 2, 0);  // due at the same time as the foreign one
  notices.deliver(foreign);
  core::run_to_completion();
  EXPECT_EQ(order, (std::vector<int>{2, 2, 3}));
  Notice late = local_twin;
  EXPECT_THROW(notices.deliver(late), std::runtime_error);
  EXPECT_THROW(notices.post(channel, 0, 0, 0), std::logic_error);
}

}  // namespace
}  // namespace podsim::system
