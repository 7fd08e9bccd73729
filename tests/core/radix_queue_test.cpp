// The radix queue behind the event queue: entries come out by time, equal times in the order
// they went in, however pushes and pops interleave.
#include "hw/core/radix_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace podsim::core {
namespace {

struct Item {
  TimePs at;
  std::uint64_t seq;
};

TEST(RadixQueue, EqualTimesComeOutInTheOrderTheyWentIn) {
  RadixQueue<Item> q;
  q.push({50, 0});
  q.push({10, 1});
  q.push({50, 2});
  q.push({10, 3});
  std::vector<std::uint64_t> out;
  while (!q.empty()) out.push_back(q.pop().seq);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{1, 3, 0, 2}));
}

TEST(RadixQueue, MatchesASortedReferenceUnderRandomInterleaving) {
  std::mt19937_64 rng(7);
  RadixQueue<Item> q;
  std::set<std::pair<TimePs, std::uint64_t>> reference;
  std::uint64_t seq = 0;
  TimePs now = 0;
  for (int step = 0; step < 200000; ++step) {
    if (reference.empty() || rng() % 3 != 0) {
      // Mostly near future, some ties, now and then far ahead.
      const std::uint64_t r = rng() % 100;
      const TimePs delay = r < 10 ? 0 : r < 90 ? rng() % 5000 : rng() % (TimePs{1} << 40);
      Item it{now + delay, seq++};
      q.push(it);
      reference.insert({it.at, it.seq});
    } else {
      const Item got = q.pop();
      ASSERT_EQ(got.seq, reference.begin()->second) << "step " << step;
      ASSERT_EQ(got.at, reference.begin()->first);
      now = got.at;
      reference.erase(reference.begin());
    }
    ASSERT_EQ(q.size(), reference.size());
  }
}

TEST(RadixQueue, RejectsATimeBeforeTheLastTakenOut) {
  RadixQueue<Item> q;
  q.push({100, 0});
  q.pop();
  EXPECT_EQ(q.floor(), 100u);
  EXPECT_THROW(q.push({99, 1}), std::logic_error);
  q.push({100, 2});
  EXPECT_EQ(q.pop().seq, 2u);
}

}  // namespace
}  // namespace podsim::core
