// The small GPT-style model the training tests run: two layers and a head, a few million
// parameters at most, launches of tens of microseconds.
#pragma once

#include <cstdint>

#include "training/model.h"

namespace podsim::training::test {

inline Model small_gpt(std::uint32_t hidden = 128, std::uint32_t sequence = 64,
                       std::uint32_t vocab = 1024) {
  ModelRequest r;
  r.name = "gpt";
  r.layers = 2;
  r.hidden = hidden;
  r.heads = 2;
  r.sequence = sequence;
  r.vocab = vocab;
  r.batch = 2;
  return make_model(r);
}

}  // namespace podsim::training::test
