#pragma once

// Clock calibration. Device clocks and host clocks may start from
// different bases or drift apart; then a kernel appears to start before
// the host call that launched it, or to end after the synchronize call
// that waited for it returned. Calibration estimates one offset per clock
// domain (calibrated = raw + offset) from ordering anchors whose order is
// known to hold.
//
// Clock domains: per source (one profiled process), its host threads are
// one host clock; per (source, device index), the device's streams are one
// clock (or each stream its own, `per_stream`). Every anchor joins two
// tasks of one source, so domains joined by anchors form groups; each
// group with a host domain has that host clock as its reference (offset
// 0); a group without one is unanchored (offset 0, reported so).
//
// Anchors, each a difference constraint offset(to) - offset(from) >=
// release(from) - time(to) on raw times:
//  lower bounds on a device (it cannot run earlier than):
//  - launch: a device task starts no earlier than its launching call starts;
//  - event: a task waiting on an event starts no earlier than the record
//    ends;
//  - copy: the first task of a node consuming a copy's output starts no
//    earlier than the copy ends;
//  upper bounds (it cannot run later than):
//  - sync: a device task launched before a host synchronize call began
//    that waited for its stream (the stream or device the trace names, or
//    a device synchronize in a source with one device) ends no later than
//    the call ends;
//  - sync_copy: a synchronous copy (cudaMemcpy device-to-host, or from
//    pinned host memory) ends no later than its host call ends.
// Per domain, shortest paths over the tightest anchor of each domain pair
// give the feasible interval [lower, upper] of its offset (either side may
// be open). The estimate is 0 when the interval holds 0 (the raw clocks
// agree: CUPTI already aligns GPU time to the host), else its midpoint
// when both sides are finite (the true offset lies within +- half the
// width), else the finite side (the smallest correction; nothing says by
// how much more). Domains are fixed one at a time, each within the
// interval left by those fixed before it, so the estimates satisfy every
// anchor together when the anchors allow it. lower > upper is a
// contradiction (anchors no offset satisfies); its estimate is the middle
// of the gap. Anchors inside one domain cannot be fixed by offsets: they,
// and contradicting ones, are the residual violations.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/timing/timing_common.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

struct CalibrationOptions {
  // One domain per device stream instead of per device (for traces whose
  // streams were timed separately).
  bool per_stream = false;
};

enum class AnchorKind : uint8_t { kLaunch, kEvent, kCopy, kSync, kSyncCopy };
inline constexpr size_t kAnchorKindCount = 5;
std::string_view AnchorKindName(AnchorKind kind);

// An anchor: `to` cannot happen (start, or for sync anchors end) before
// `from` is released, so offset(to) - offset(from) >= from_ns - to_ns.
struct AnchorRef {
  TaskId from;
  TaskId to;
  AnchorKind kind = AnchorKind::kLaunch;
  int64_t from_ns = 0;  // raw release time on from's clock
  int64_t to_ns = 0;    // raw time on to's clock
};

struct ClockDomainOffset {
  // "host", "device 0", "stream 7 (device 0)"; with several sources
  // after the source: "rank 1 · device 0" (trace.h HostClockName,
  // DeviceIndexName, TrackMentionName).
  std::string name;
  enum class Kind : uint8_t { kHost, kDevice, kStream } kind = Kind::kHost;
  uint32_t source = kNoSource;  // SourceId value, kNoSource: unnamed
  int32_t device = -1;          // device domains and streams
  std::vector<TrackId> tracks;
  // The reference of its group (a host clock): offset 0 by definition.
  bool reference = false;
  // Joined by anchors to a reference. An unanchored domain keeps offset 0:
  // nothing relates its clock to a host clock.
  bool anchored = false;
  // Index (into CalibrationReport::domains) of its group's reference, or
  // -1 when unanchored.
  int32_t reference_domain = -1;
  // The feasible interval of the offset given the anchors (reference at 0):
  // the true offset lies in it. nullopt: open on that side.
  std::optional<int64_t> lower_ns;
  std::optional<int64_t> upper_ns;
  // The estimate applied: calibrated = raw + offset_ns.
  int64_t offset_ns = 0;
  // |true offset - estimate| <= error_bound_ns when both sides are finite
  // (half the width for a midpoint estimate); nullopt when a side is open.
  std::optional<int64_t> error_bound_ns;
  // lower > upper: anchors no offset satisfies.
  bool contradiction = false;
  // Anchors between this domain and another one.
  uint64_t anchors = 0;
  // The anchors that set the lower and upper bound (the last anchor of the
  // tightest chain from the reference).
  std::optional<AnchorRef> binding_lower;
  std::optional<AnchorRef> binding_upper;
};

struct CalibrationReport {
  bool computed = false;
  bool per_stream = false;
  std::vector<ClockDomainOffset> domains;
  // Per track (TrackId value): the offset chosen for its domain.
  std::vector<int64_t> track_offset_ns;
  uint64_t anchors = 0;
  uint64_t anchors_by_kind[kAnchorKindCount] = {0, 0, 0, 0, 0};
  // Domains whose interval is empty, and domains left unanchored.
  uint64_t contradictions = 0;
  uint64_t unanchored = 0;
  // Anchors whose dependent precedes its dependency, before and after the
  // offsets (residuals: same-domain or contradicting anchors).
  uint64_t violations_before = 0;
  int64_t worst_violation_before_ns = 0;
  uint64_t residual_violations = 0;
  int64_t worst_residual_ns = 0;
  TaskId worst_residual_from;
  TaskId worst_residual_to;
  // False when shortest paths did not settle (anchors contradicting around
  // a cycle of non-reference domains).
  bool converged = true;
  // Groups whose references count time from different bases (an ONNX
  // Runtime profile from its session start, Kineto from the Unix epoch)
  // with no anchor between them: their times are not comparable.
  bool time_bases_differ = false;
  // Sentences for people: unanchored domains, references that no anchor
  // joins, time bases that differ.
  std::vector<std::string> notes;
};

// Reads raw times (ignores offsets already on the tracks).
CalibrationReport Calibrate(const Model& model, const Trace& trace,
                            const Links& links,
                            const CalibrationOptions& options);

// Sets TrackInfo::clock_offset_ns of every track from the report.
void ApplyCalibration(const CalibrationReport& report, Trace* trace);

}  // namespace mi::analysis
