// Colour by diff: what one graph pane's nodes are in a diff of two runs
// (GET /api/diff, docs/reference/http-api.md "Diff"). The pane is one side
// of the diff: in compare mode the left pane is the base and the right pane
// the new run; with one run in both panes the diff is that run's framework
// level against its compiled level, and the side is the pane's level. The
// report names nodes by the sessions' node ids (the layout's model node
// ids): a change by base_node_id on the base side and new_node_id on the
// new side, a timing delta likewise.

import { fmtNs } from '../../base/format';
import type { DiffLevelJson, DiffReportJson } from '../../rpc/api';
import type { DiffEntry, DiffNodeNote } from '../../core/state';

/** Changed nodes a pane lists in the legend, at most. */
export const kMaxDiffNodesListed = 30;

export enum DiffKind { Same = 0, Added = 1, Removed = 2, Changed = 3, Renamed = 4 }
export enum DiffTiming { None = 0, Slower = 1, Faster = 2, Same = 3 }

/** One node's part in the diff. */
export interface DiffMark {
  kind: DiffKind;
  timing: DiffTiming;
  /** The node's time change in % of the base median (timing Slower / Faster / Same). */
  pct: number;
}

/** What a pane colours by diff: per model node id its mark (unlisted nodes are unchanged, untimed), or why nothing. */
export interface PaneDiff {
  /** "run 0 (base)", "run 1 (new)", "framework (base)". */
  side: string | null;
  reason: string | null;
  marks: Map<number, DiffMark> | null;
  /** The report's headline (total, gate, crossed rules), whether the gate failed, the side's changed nodes. */
  summary?: string[];
  failed?: boolean;
  nodes?: DiffNodeNote[];
}

/** The report's headline: the total time change and the gate's verdict with the crossed rules' messages. */
export function diffSummary(report: DiffReportJson): string[] {
  const out: string[] = [];
  const t = report.timing?.total;
  if (t) {
    const pct = `${t.delta_pct >= 0 ? '+' : ''}${t.delta_pct.toFixed(1)} %`;
    out.push(`total ${fmtNs(t.base.median_ns)} → ${fmtNs(t.new.median_ns)} (${pct}, ${t.verdict}; noise ${fmtNs(t.noise_ns)})`);
  } else {
    out.push('no timing: a run has no trace');
  }
  const crossed = report.rules.filter((r) => r.crossed);
  out.push(report.rules.length ? `gate: ${report.failed ? 'fails' : 'passes'} (${crossed.length} of ${report.rules.length} rules crossed)` : 'gate: no rules');
  for (const r of crossed) out.push(r.message || r.rule);
  return out;
}

const kKinds: Record<string, DiffKind> = { added: DiffKind.Added, removed: DiffKind.Removed, changed: DiffKind.Changed, renamed: DiffKind.Renamed };

/**
 * The marks of the pane at position `k` (0 left / base, 1 right / new)
 * showing `level` of `run`, from the diff of runs base → next (`entry`).
 */
export function paneDiff(k: number, run: number, level: string, base: number, next: number, entry: DiffEntry | undefined): PaneDiff {
  if (!entry || entry.status === 'loading') return { side: null, reason: `diff of run ${base} → run ${next}: asking the server…`, marks: null };
  if (entry.status === 'error' || !entry.report) return { side: null, reason: `diff of run ${base} → run ${next}: ${entry.error ?? 'no answer'}`, marks: null };
  const report: DiffReportJson = entry.report;
  let baseSide: boolean;
  let lv: DiffLevelJson | undefined;
  let side: string;
  if (base === next) {
    // One run: its framework level (base) against its compiled level (new).
    lv = report.structure.find((l) => l.level === 'framework->compiled');
    if (level !== 'framework' && level !== 'compiled') return { side: null, reason: `a diff of one run's levels covers framework and compiled, not ${level}`, marks: null };
    baseSide = level === 'framework';
    side = `${level} (${baseSide ? 'base' : 'new'}) of run ${run}`;
    if (!lv) return { side: null, reason: `run ${run} has no framework and compiled level to diff`, marks: null };
  } else {
    baseSide = k === 0;
    lv = report.structure.find((l) => l.level === level);
    side = `run ${run} (${baseSide ? 'base' : 'new'}) · ${level}`;
    if (!lv) return { side: null, reason: `the diff has no ${level} level: run ${base} or run ${next} lacks it`, marks: null };
  }
  const marks = new Map<number, DiffMark>();
  const nodes: DiffNodeNote[] = [];
  for (const c of lv.changes) {
    const id = baseSide ? c.base_node_id : c.new_node_id;
    const kind = kKinds[c.kind];
    if (id === null || kind === undefined) continue;
    marks.set(id, { kind, timing: DiffTiming.None, pct: 0 });
    if (nodes.length < kMaxDiffNodesListed) {
      const what = c.kind === 'renamed' ? `renamed: ${c.base_name} → ${c.new_name}`
        : c.kind === 'added' ? `added: ${c.new_op_type}` : c.kind === 'removed' ? `removed: ${c.base_op_type}`
        : c.changes?.[0] ?? 'changed';
      nodes.push({ pane: k, run, level, id, name: (baseSide ? c.base_name : c.new_name) || c.new_name || c.base_name, kind: c.kind, what });
    }
  }
  if (report.timing && base !== next) {
    for (const d of report.timing.nodes) {
      if (d.level !== level) continue;
      const id = baseSide ? d.base_node_id : d.new_node_id;
      if (id === null) continue;
      const timing = d.verdict === 'slower' ? DiffTiming.Slower : d.verdict === 'faster' ? DiffTiming.Faster : d.verdict === 'same' ? DiffTiming.Same : DiffTiming.None;
      if (timing === DiffTiming.None) continue;
      const m = marks.get(id) ?? { kind: DiffKind.Same, timing: DiffTiming.None, pct: 0 };
      m.timing = timing;
      m.pct = d.delta_pct;
      marks.set(id, m);
    }
  }
  return { side, reason: null, marks, summary: diffSummary(report), failed: report.failed, nodes };
}
