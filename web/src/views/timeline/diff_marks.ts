// The timeline's compare marks from a diff (GET /api/diff): which op types
// of the compared run got slower than in the main run beyond the noise
// (docs/design/diff.md "Timing"), and which tasks linked to no node, by
// their name; most slowed first. A timeline box's label is its op type
// (its name when it is linked to no node), so the marks match by label.

import type { DiffDeltaJson, DiffReportJson } from '../../rpc/api';

export function slowerLabels(report: DiffReportJson): DiffDeltaJson[] {
  const t = report.timing;
  if (!t) return [];
  return [...t.op_types, ...t.unlinked_tasks].filter((d) => d.verdict === 'slower').sort((a, b) => b.delta_ns - a.delta_ns);
}

/** Nodes the compare marks outline the tasks of, at most. */
export const kMaxSlowerNodes = 20;

/** The matched nodes (with an id in the new run) found slower, most slowed first. */
export function slowerNodes(report: DiffReportJson): DiffDeltaJson[] {
  const t = report.timing;
  if (!t) return [];
  return t.nodes.filter((d) => d.verdict === 'slower' && d.new_node_id !== null).sort((a, b) => b.delta_ns - a.delta_ns);
}

/** "+12.3 %", "-4.0 %". */
export function fmtPct(pct: number): string {
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`;
}
