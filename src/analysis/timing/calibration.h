#pragma once

// E4: clock calibration. Device clocks and the host clock drift apart or
// start from different bases; then a kernel appears to start before the
// host call that launched it. Calibration estimates one offset per clock
// domain (the streams of one device share a clock; host threads are the
// reference, offset 0) from ordering anchors whose order is known:
//  - launch: a device task cannot start before its launching host call
//    starts;
//  - event: a task waiting on an event cannot start before the task that
//    recorded it ends;
//  - copy: a task of a node consuming a copy's output cannot start before
//    the copy ends.
// Each anchor is a difference constraint offset(to) - offset(from) >= w.
// Starting from 0 everywhere, Bellman-Ford relaxation moves each domain
// only as far as its constraints force it (the smallest correction): a
// domain with no violated anchor keeps offset 0. Anchors inside one domain
// cannot be fixed by offsets; they, and contradicting anchors, are reported
// as residual violations (count and worst ns).

#include <cstdint>
#include <string>
#include <vector>

#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

struct CalibrationOptions {
  // One domain per device stream instead of per device (for traces whose
  // streams were timed separately).
  bool per_stream = false;
};

enum class AnchorKind : uint8_t { kLaunch, kEvent, kCopy };
std::string_view AnchorKindName(AnchorKind kind);

struct ClockDomainOffset {
  std::string name;  // "host", "device 0", "stream 7 (device 0)"
  std::vector<TrackId> tracks;
  int64_t offset_ns = 0;
  bool reference = false;  // host threads (and tracks of no device)
  // Anchors between this domain and another one.
  uint64_t anchors = 0;
  // The anchor that set the offset (the tightest one), when it moved.
  TaskId binding_from;
  TaskId binding_to;
};

struct CalibrationReport {
  bool computed = false;
  bool per_stream = false;
  std::vector<ClockDomainOffset> domains;
  // Per track (TrackId value): the offset chosen for its domain.
  std::vector<int64_t> track_offset_ns;
  uint64_t anchors = 0;
  uint64_t anchors_by_kind[3] = {0, 0, 0};
  // Anchors whose dependent starts before its dependency, before and after
  // the offsets (residuals: same-domain or contradicting anchors).
  uint64_t violations_before = 0;
  int64_t worst_violation_before_ns = 0;
  uint64_t residual_violations = 0;
  int64_t worst_residual_ns = 0;
  TaskId worst_residual_from;
  TaskId worst_residual_to;
  // False when relaxation did not settle (contradicting anchors across
  // domains, a "positive cycle").
  bool converged = true;
};

// Reads raw times (ignores offsets already on the tracks).
CalibrationReport Calibrate(const Model& model, const Trace& trace,
                            const Links& links,
                            const CalibrationOptions& options);

// Sets TrackInfo::clock_offset_ns of every track from the report.
void ApplyCalibration(const CalibrationReport& report, Trace* trace);

}  // namespace mi::analysis
