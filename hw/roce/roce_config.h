// Configuration of a RoCE v2 NIC: path MTU, acknowledgement coalescing, retransmission, pipeline
// latencies, traffic classes, and congestion control: DCQCN's rates, or a TCP sender's window
// when the NIC carries TCP.
// Captures: every number the NIC model uses, each with its source (network.md unless noted).
// Ignores: per-QP overrides (every QP of a NIC shares these values) and the chip-level NIC
// description (port count and speed live in the chip and system configs; the port speed is the
// rate of the link a port is attached to).
#pragma once

#include <cstdint>

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/roce/congestion_window.h"

namespace podsim::roce {

// DCQCN reaction point (sender) parameters, in two profiles: the DCQCN paper's rules and timers,
// and deployed NICs' as HPCC's simulator ([N2]) models them, the default: with the paper's, a
// k=8 fat-tree permutation of 2 MB flows has a p99 completion three to four times HPCC's, and
// 2-to-1 and 7-to-1 incasts leave the port a quarter and half idle (docs/network.md). The rate
// steps are HPCC's in both.
// How the reaction point behaves where the paper and deployed NICs differ ([N2]'s simulator
// follows the NICs): whether every cut sets the target to the current rate or only the first cut
// after a timer increase (a burst of cuts then keeps the target the flow had before it; NVIDIA's
// clamp_tgt_rate_after_time_inc); whether alpha moves at each cut or once per alpha period (up
// by g when a CNP came in the period); whether hyper increase grows with each event (the paper's
// i x HAI) or adds HAI each time.
enum class DcqcnProfile { kPaper, kNic };
enum class ClampTarget { kEveryCut, kAfterTimerIncrease };
enum class AlphaUpdate { kPerCut, kPerPeriod };

struct DcqcnConfig {
  // Defaults: the `nic` profile (docs/network.md compares it with the paper's and with HPCC's
  // simulator).
  bool enabled = true;
  DcqcnProfile profile = DcqcnProfile::kNic;
  ClampTarget clamp_target = ClampTarget::kAfterTimerIncrease;
  AlphaUpdate alpha_update = AlphaUpdate::kPerPeriod;
  bool hyper_increase_grows = false;
  core::Duration alpha_update_period{1000000};     // 1 us
  core::Duration rate_decrease_period{4000000};    // 4 us
  core::Duration rate_increase_period{300000000};  // 300 us
  core::ByteSize byte_counter{0};                  // none
  double g = 1.0 / 256;
  int fast_recovery_rounds = 1;
  core::Bandwidth additive_increase{20e6};  // 20 Mb/s
  core::Bandwidth hyper_increase{200e6};    // 200 Mb/s
  core::Bandwidth min_rate{1e9};            // 1 Gb/s
  double initial_alpha = 1.0;

  // The DCQCN paper's rules and timers (50 us alpha and decrease, 55 us increase, a 10 MB byte
  // counter, F = 5).
  static DcqcnConfig paper() {
    DcqcnConfig c;
    c.apply(DcqcnProfile::kPaper);
    return c;
  }
  // The paper's rules with the timers of HPCC's simulator's "dcqcn" set ([N2], the nic
  // profile's), for comparison studies.
  static DcqcnConfig hpcc() {
    const DcqcnConfig nic;
    DcqcnConfig c = paper();
    c.alpha_update_period = nic.alpha_update_period;
    c.rate_decrease_period = nic.rate_decrease_period;
    c.rate_increase_period = nic.rate_increase_period;
    c.fast_recovery_rounds = nic.fast_recovery_rounds;
    return c;
  }
  // Deployed NICs' rules as [N2]'s simulator models them, with its timers: the defaults.
  static DcqcnConfig nic() { return DcqcnConfig{}; }

  // Sets every key the profile decides; keys a file gives beside `profile` override them. The
  // nic profile's values are the member defaults above; the paper's are here.
  void apply(DcqcnProfile p) {
    const DcqcnConfig nic;
    const bool is_nic = p == DcqcnProfile::kNic;
    profile = applied_profile_ = p;
    alpha_update_period = is_nic ? nic.alpha_update_period : core::Duration{50000000};
    rate_decrease_period = is_nic ? nic.rate_decrease_period : core::Duration{50000000};
    rate_increase_period = is_nic ? nic.rate_increase_period : core::Duration{55000000};
    fast_recovery_rounds = is_nic ? nic.fast_recovery_rounds : 5;
    byte_counter = is_nic ? nic.byte_counter : core::ByteSize{10000000};
    clamp_target = is_nic ? nic.clamp_target : ClampTarget::kEveryCut;
    alpha_update = is_nic ? nic.alpha_update : AlphaUpdate::kPerCut;
    hyper_increase_grows = is_nic ? nic.hyper_increase_grows : true;
  }

  static const core::Choices<DcqcnProfile>& profile_choices() {
    static const core::Choices<DcqcnProfile> c = {{"paper", DcqcnProfile::kPaper},
                                                  {"nic", DcqcnProfile::kNic}};
    return c;
  }
  static const core::Choices<ClampTarget>& clamp_choices() {
    static const core::Choices<ClampTarget> c = {
        {"every_cut", ClampTarget::kEveryCut},
        {"after_timer_increase", ClampTarget::kAfterTimerIncrease}};
    return c;
  }
  static const core::Choices<AlphaUpdate>& alpha_choices() {
    static const core::Choices<AlphaUpdate> c = {{"per_cut", AlphaUpdate::kPerCut},
                                                 {"per_period", AlphaUpdate::kPerPeriod}};
    return c;
  }

  template <class V>
  void describe(V& v) {
    v.field("enabled", enabled,
            core::Spec("run DCQCN: receivers send CNPs for CE-marked data, senders pace QPs")
                .source("[N2], [N3]: DCQCN is the RoCE congestion control of both anchors"));
    v.choice("profile", profile, profile_choices(),
             core::Spec("nic: deployed NICs' rules with HPCC's timers; paper: the DCQCN paper's "
                        "(sets the keys below; any given beside it override it)")
                 .source("[N2] HPCC's simulator (paper: [N3])"));
    if (profile != applied_profile_) apply(profile);  // a file just chose it: its keys follow
    v.choice("clamp_target", clamp_target, clamp_choices(),
             core::Spec("every_cut: each cut sets the target to the current rate; "
                        "after_timer_increase: only the first cut after a timer increase")
                 .source("[N2] HPCC and NVIDIA after_timer_increase (paper: [N3] every_cut)"));
    v.choice("alpha_update", alpha_update, alpha_choices(),
             core::Spec("per_cut: alpha rises by g at each cut; per_period: once per alpha "
                        "period in which a CNP came")
                 .source("[N2] HPCC per_period (paper: [N3] per_cut)"));
    v.field("hyper_increase_grows", hyper_increase_grows,
            core::Spec("hyper increase adds i x HAI at its i-th event (true) or HAI each time")
                .source("[N2] HPCC false (paper: [N3] true)"));
    v.field("alpha_update_period", alpha_update_period,
            core::Spec("alpha decays by (1-g) per period without a CNP")
                .positive()
                .source("[N2] HPCC dcqcn 1us (paper profile: [N3] 50us)"));
    v.field("rate_decrease_period", rate_decrease_period,
            core::Spec("at most one rate cut per period; later CNPs wait for the next")
                .positive()
                .source("[N2] HPCC dcqcn and NVIDIA 4us (paper profile: [N3] 50us)"));
    v.field(
        "rate_increase_period", rate_increase_period,
        core::Spec("rate-increase timer")
            .positive()
            .source("[N2] HPCC dcqcn and NVIDIA rpg_time_reset 300us (paper profile: [N3] 55us)"));
    v.field("byte_counter", byte_counter,
            core::Spec("bytes sent per byte-counter increase event; 0 disables the counter")
                .source("[N2] HPCC's simulator has none (paper profile: [N3] 10MB; NVIDIA "
                        "rpg_byte_reset 32767B)"));
    v.field("g", g, core::Spec("alpha gain").range(0, 1).source("[N2], [N3]: 1/256"));
    v.field("fast_recovery_rounds", fast_recovery_rounds,
            core::Spec("F: increase events spent in fast recovery after a cut")
                .range(0, 1000)
                .source("[N2] HPCC dcqcn 1 (paper profile: [N3] 5)"));
    v.field("additive_increase", additive_increase,
            core::Spec("AI: target-rate step of additive increase")
                .min(0)
                .source("[N2] HPCC 5Mb/s per 25Gb/s of line rate, 20Mb/s at 100G"));
    v.field("hyper_increase", hyper_increase,
            core::Spec("HAI: target-rate step of hyper increase")
                .min(0)
                .source("[N2] HPCC 50Mb/s per 25Gb/s of line rate, 200Mb/s at 100G"));
    v.field("min_rate", min_rate,
            core::Spec("floor of the sending rate")
                .positive()
                .source("[N2] HPCC 1Gb/s (NVIDIA rpg_min_rate 1Mb/s)"));
    v.field("initial_alpha", initial_alpha,
            core::Spec("alpha before the first CNP")
                .range(0, 1)
                .source("DCQCN paper 1; NVIDIA initial_alpha 1023/1024 ([N2])"));
  }

 private:
  DcqcnProfile applied_profile_ = DcqcnProfile::kNic;  // whose values the keys hold
};

struct RoceConfig {
  int mtu = 4096;
  int ack_every = 1;
  int retransmit_timeout = 14;  // exponent t: 4.096us x 2^t
  int retry_limit = 7;
  core::Duration nak_interval{500000000};      // 500 us
  core::Duration tx_pipeline_latency{500000};  // 500 ns
  core::Duration rx_pipeline_latency{500000};  // 500 ns
  int data_priority = 3;
  int control_priority = 6;
  // As NICs deploy it (NVIDIA's min_time_between_cnps); the DCQCN paper's is 50 us. With 50 us a
  // k=8 fat-tree permutation's median flow ended 30% before HPCC's simulator's (docs/network.md).
  core::Duration cnp_interval{4000000};  // 4 us
  DcqcnConfig dcqcn;
  bool window_control = false;
  WindowConfig window;

  // 4.096 us x 2^t in picoseconds; 0 when t is 0 (IBTA: no timeout).
  std::uint64_t retransmit_timeout_ps() const {
    return retransmit_timeout == 0 ? 0 : std::uint64_t{4096000} << retransmit_timeout;
  }
  // The retransmission timer a QP runs: TCP's RTO under a window, else the IBTA timeout.
  std::uint64_t timer_ps() const {
    return window_control ? static_cast<std::uint64_t>(window.rto.ps) : retransmit_timeout_ps();
  }

  template <class V>
  void describe(V& v) {
    v.field("mtu", mtu,
            core::Spec("path MTU: payload bytes per packet (256, 512, 1024, 2048 or 4096)")
                .range(256, 4096)
                .source("[N1] IBTA RoCEv2: 4096B"));
    v.field("ack_every", ack_every,
            core::Spec("responder sends one ACK per this many packets (and on AckReq)")
                .range(1, 1 << 20)
                .source("[N2] one per packet, HPCC L2_ACK_INTERVAL 1"));
    v.field("retransmit_timeout", retransmit_timeout,
            core::Spec("local ACK timeout exponent t: timeout = 4.096us x 2^t; 0 = never")
                .range(0, 31)
                .source("IBTA 9.7.6.1.3; 14 (67ms) is the perftest default, NCCL uses 18 and "
                        "HCCL 20 ([N2], [C6])"));
    v.field("retry_limit", retry_limit,
            core::Spec("retransmissions after timeouts before the WQE fails (retry_cnt)")
                .range(0, 7)
                .source("IBTA retry_cnt, 3 bits; 7 as perftest and NCCL set it"));
    v.field("nak_interval", nak_interval,
            core::Spec("a gap still open this long after its NAK is NAKed again; 0 = once")
                .min(0)
                .source("[N2] NAK rate-limit 500us (HPCC rdma-hw.cc)"));
    v.field("tx_pipeline_latency", tx_pipeline_latency,
            core::Spec("doorbell or retransmission restart to first packet ready, before the "
                       "payload read")
                .min(0)
                .source("[N7] RNIC TX+RX pipelines ~1us per NIC [U]; split evenly"));
    v.field("rx_pipeline_latency", rx_pipeline_latency,
            core::Spec("packet tail received to payload write issued / ACK processed")
                .min(0)
                .source("[N7] RNIC TX+RX pipelines ~1us per NIC [U]; split evenly"));
    v.field("data_priority", data_priority,
            core::Spec("802.1p class of data packets (the lossless RoCE class)")
                .range(0, 7)
                .source("[N2]: lossless class for RDMA; 3 is the common RoCE class"));
    v.field("control_priority", control_priority,
            core::Spec("802.1p class of ACK, NAK and CNP")
                .range(0, 7)
                .source("[N8] NVIDIA CNP prio 6; HPCC sends ACKs at high priority"));
    v.field("cnp_interval", cnp_interval,
            core::Spec("minimum time between CNPs a receiver sends to one QP")
                .min(0)
                .source("[N8] NVIDIA min_time_between_cnps 4us ([N3] DCQCN paper: 50us)"));
    v.section("dcqcn", dcqcn, core::Spec("DCQCN congestion control"));
    v.field("window_control", window_control,
            core::Spec("limit each QP's packets in flight by a TCP sender's congestion window "
                       "(the NIC carries TCP; DCQCN must be off)")
                .source("[T12]: a TCP sender's window; RoCE NICs run DCQCN [N2]"));
    v.section("window", window, core::Spec("the TCP congestion window (window_control)"));
  }

  void check(core::ConfigChecks& c) const {
    if ((mtu & (mtu - 1)) != 0) c.fail("mtu", "must be 256, 512, 1024, 2048 or 4096");
    if (window_control && dcqcn.enabled) {
      c.fail("window_control", "a TCP window replaces DCQCN: set dcqcn.enabled to false too");
    }
    // The responder has no delayed-ACK timer: a window smaller than ack_every would wait for an
    // ACK that never comes.
    if (window_control && ack_every != 1) {
      c.fail("window_control", "a TCP window needs an ACK per packet: set ack_every to 1");
    }
  }
};

}  // namespace podsim::roce
