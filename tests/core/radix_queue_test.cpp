// The radix queue behind the event queue: entries come out by time, equal times in the order
// they went in, however pushes and pops interleave.
#include "core/radix_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
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

TEST(RadixQueue, AComparatorOrdersEqualTimes) {
  struct BySeq {
    bool operator()(const Item& a, const Item& b) const { return a.seq < b.seq; }
  };
  RadixQueue<Item, BySeq> q;
  for (std::uint64_t seq : {5, 3, 9, 1}) q.push({700, seq});
  q.push({300, 8});
  std::vector<std::uint64_t> out;
  while (!q.empty()) out.push_back(q.pop().seq);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{8, 1, 3, 5, 9}));
}

// The event queue's window can take out a far entry and then schedule many nearer ones: they
// must come out in order, ties in push order, however many there are.
TEST(RadixQueue, ManyTimesBeforeTheLastTakenOutComeOutInOrder) {
  RadixQueue<Item> q;
  q.push({1u << 30, 0});
  EXPECT_EQ(q.pop().seq, 0u);
  std::mt19937_64 rng(9);
  std::set<std::pair<TimePs, std::uint64_t>> reference;
  for (std::uint64_t seq = 1; seq <= 5000; ++seq) {
    const TimePs at = rng() % 1000;  // few distinct times: many ties
    q.push({at, seq});
    reference.insert({at, seq});
  }
  for (const auto& [at, seq] : reference) {
    const Item got = q.pop();
    ASSERT_EQ(got.seq, seq);
    ASSERT_EQ(got.at, at);
  }
  EXPECT_TRUE(q.empty());
}

// After a far entry is taken out, near entries pile up before it; the queue starts its buckets
// again from them (a regression: they used to go through the small heap for good, which made a
// pipelined collective's simulation 1.6 times slower). Order and ties must survive every restart.
TEST(RadixQueue, NearEntriesAfterAFarOneKeepTheirOrderAcrossRestarts) {
  std::mt19937_64 rng(11);
  RadixQueue<Item> q;
  std::set<std::pair<TimePs, std::uint64_t>> reference;
  std::uint64_t seq = 0;
  TimePs now = 0;
  for (int round = 0; round < 50; ++round) {
    // A far entry comes out first when nothing nearer is queued.
    while (!reference.empty()) {
      ASSERT_EQ(q.pop().seq, reference.begin()->second);
      reference.erase(reference.begin());
    }
    const TimePs far = now + (TimePs{1} << 30);
    q.push({far, seq});
    reference.insert({far, seq++});
    ASSERT_EQ(q.pop().seq, reference.begin()->second);
    reference.erase(reference.begin());
    // Then many entries before it, interleaved with pops, with many ties.
    for (int step = 0; step < 3000; ++step) {
      if (reference.empty() || rng() % 4 != 0) {
        Item it{now + rng() % 2000, seq++};
        q.push(it);
        reference.insert({it.at, it.seq});
      } else {
        const Item got = q.pop();
        ASSERT_EQ(got.seq, reference.begin()->second) << "round " << round << " step " << step;
        now = got.at;
        reference.erase(reference.begin());
      }
    }
  }
}

TEST(RadixQueue, ATimeBeforeTheLastTakenOutComesOutFirst) {
  RadixQueue<Item> q;
  q.push({100000, 0});
  q.push({200000, 1});
  EXPECT_EQ(q.pop().seq, 0u);
  q.push({5, 2});       // a whole slice before the last taken out
  q.push({100000, 3});  // the same time as it
  q.push({150000, 4});
  std::vector<std::uint64_t> out;
  while (!q.empty()) out.push_back(q.pop().seq);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{2, 3, 4, 1}));
}

// all_of sees every entry still queued, wherever it waits (early heap, current slice, buckets),
// and none taken out.
TEST(RadixQueue, AllOfSeesEveryQueuedEntryAndNoneTakenOut) {
  RadixQueue<Item> q;
  for (std::uint64_t i = 0; i < 64; ++i) q.push({(i * 7919) % 1000000 + 1000, i});
  std::set<std::uint64_t> out;
  for (int i = 0; i < 10; ++i) out.insert(q.pop().seq);
  q.push({5, 100});  // before the last taken out: the early heap
  std::set<std::uint64_t> seen;
  EXPECT_TRUE(q.all_of([&](const Item& it) { return seen.insert(it.seq).second; }));
  EXPECT_EQ(seen.size(), q.size());
  for (const std::uint64_t s : out) EXPECT_EQ(seen.count(s), 0u);
  EXPECT_EQ(seen.count(100), 1u);
  EXPECT_FALSE(q.all_of([](const Item& it) { return it.seq != 63; }));
}

}  // namespace
}  // namespace podsim::core
