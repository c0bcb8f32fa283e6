// Tensor probes as the server answers them (docs/reference/http-api.md
// "Probes", "Re-run with probes", "Saved sessions"): a level's latest
// statistics per node (colour by statistic, marks), one node's probes with
// their series over the last runs and per-step values, the re-run job, and
// the saved session. Pure data and the few functions that read it; the
// requests are in api.ts.

/** The statistics of one tensor (docs/reference/probe-store.md); min..abs_max over finite values, null when none. */
export interface ProbeStats {
  count: number; nan: number; pos_inf: number; neg_inf: number; zero: number;
  min: number | null; max: number | null; mean: number | null; std: number | null; l2: number | null; abs_max: number | null;
  dtype?: string; shape?: number[];
  [extra: string]: unknown;
}

export interface ProbeRunJson {
  id: number; created?: string; backend?: string; model?: string; level?: string; label?: string; inputs?: string;
  status?: string; stopped_at?: string; elapsed_ns?: number;
}

export interface ProbeTriggerHitJson {
  run?: number; trigger: string; probe: string; node: string; role: string; detail?: string; order?: number;
  /** The node's model id at the level asked, when the server matched it. */
  node_id?: number | null;
}

/** One node of a level: its (first output's) probe and statistics in the latest run, plugin metrics by plugin. */
export interface ProbeNodeEntry {
  probe: string; kind?: string; index?: number; stats: ProbeStats; order?: number;
  plugin?: Record<string, Record<string, unknown>>;
}

/** GET /api/runs/{run}/probes?level=L */
export interface ProbesLevelJson {
  /** The probe store read, null when the run directory has none. */
  store?: string | null;
  level?: string;
  /** The probe run shown (the latest finished one of this level, else of any), null when none. */
  run?: number | null;
  runs: ProbeRunJson[];
  stats_names: string[];
  /** By model node id at that level. */
  nodes: Record<string, ProbeNodeEntry>;
  trigger_hits?: ProbeTriggerHitJson[];
  /** Probes of the run whose node no node of the level is named. */
  unmatched?: string[];
  /** The newest probe run compared with the one before it (the probe controller adds it: GET .../probes/compare). */
  compare?: ProbeCompareJson | null;
}

/** GET /api/runs/{run}/probes/compare?level=L: per node id its metrics (msprobe's; `fail` 1 = the rule failed), the first divergent node. */
export interface ProbeCompareJson {
  level: string; run?: number; base?: number; reason?: string;
  metrics: string[];
  nodes: Record<string, Record<string, number | string | null>>;
  first_divergent: number | null; first_divergent_node: string | null;
  compared?: number; failed?: number; pass?: boolean;
}

export interface ProbeSeriesPoint { run: number; stats: ProbeStats }
export interface ProbeStepPoint { step: number; stats: ProbeStats }

/** One probe of a node (GET /api/runs/{run}/probes/node?level=L&id=N). */
export interface NodeProbeJson {
  probe: string; kind: string; index: number; stats: ProbeStats;
  series: ProbeSeriesPoint[];
  steps: ProbeStepPoint[];
  plugin?: Record<string, Record<string, unknown>>;
}
export interface ProbeNodeJson { probes: NodeProbeJson[] }

/** GET /api/runs/{run}/probes/run */
export interface RerunStateJson {
  runnable: boolean; reason: string | null; model: string; run_dir: string; inputs: string[];
  job: RerunJobJson | null;
}
export interface RerunJobJson {
  id: number; state: 'running' | 'complete' | 'failed'; probes: string[]; input: string; command: string[];
  log: string[]; lines: number; exit_code: number; error: string | null; elapsed_ms: number;
}
export interface RerunRequest { probes: string[]; input?: number; keep?: 'stats' | 'tensor'; triggers?: string[] }

/** The saved session document (docs/reference/saved-session.md). */
export interface SavedNodeRefJson { run: number; level: string; node: number; name: string; op: string }
export interface SavedSessionJson {
  format: 'model-inspector-session'; version: number;
  runs?: { name: string; paths: string[] }[];
  probes?: { patterns: string[]; triggers: string[]; keep: 'stats' | 'tensor'; inputs: string[]; input: number };
  bookmarks?: SavedNodeRefJson[];
  notes?: (SavedNodeRefJson & { text: string })[];
  view?: { hash: string; viewport?: { x: number; y: number; scale: number }; probe_stat?: string };
}
/** GET /api/session */
export interface SessionStateJson { path: string | null; restored: boolean; session: SavedSessionJson | null }
/** POST /api/session */
export interface SessionSavedJson { saved: string | null; document: string }

/**
 * Statistics the graph can be coloured by: the store's own (count, nan,
 * min, ...) and the shares derived from the counts. A plugin's metric is
 * `plugin:NAME.METRIC`, a compare metric `compare:METRIC`.
 */
export const kDerivedStats = ['zero_fraction', 'nan_fraction', 'inf_count'] as const;

/** The value of statistic `name` in `st` (derived ones computed), or null. */
export function statValue(st: ProbeStats | null | undefined, name: string): number | null {
  if (!st) return null;
  const n = st.count > 0 ? st.count : 0;
  switch (name) {
    case 'zero_fraction': return n ? st.zero / n : null;
    case 'nan_fraction': return n ? st.nan / n : null;
    case 'inf_count': return st.pos_inf + st.neg_inf;
    default: {
      const v = st[name];
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    }
  }
}

/** The value a node entry gives for a colour statistic (built-in, derived or a plugin's metric). */
export function entryValue(e: ProbeNodeEntry | undefined, stat: string): number | null {
  if (!e) return null;
  if (stat.startsWith('plugin:')) {
    const [plugin, metric] = stat.slice(7).split('.', 2);
    const v = e.plugin?.[plugin]?.[metric];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  }
  return statValue(e.stats, stat);
}

/** Colour statistics a level's answer offers: built-in, derived, then plugin metrics and compare metrics seen. */
export function colourStats(p: ProbesLevelJson | null): string[] {
  const names = p?.stats_names?.length ? p.stats_names.filter((s) => s !== 'dtype' && s !== 'shape') : ['nan', 'mean', 'std', 'min', 'max', 'abs_max', 'l2', 'zero'];
  const out = [...names, ...kDerivedStats];
  const plugins = new Set<string>();
  for (const e of Object.values(p?.nodes ?? {})) {
    for (const [plugin, m] of Object.entries(e.plugin ?? {})) for (const [k, v] of Object.entries(m)) if (typeof v === 'number') plugins.add(`plugin:${plugin}.${k}`);
  }
  out.push(...[...plugins].sort());
  for (const m of p?.compare?.metrics ?? []) out.push(`compare:${m}`);
  return out;
}

/** A node's trigger hits: the first producing NaN / Inf (the first in execution order), by model node id. */
export function firstNanNode(p: ProbesLevelJson | null): { id: number; hit: ProbeTriggerHitJson } | null {
  const hits = (p?.trigger_hits ?? []).filter((h) => h.node_id !== null && h.node_id !== undefined);
  const nanLike = hits.filter((h) => h.role === 'producer' && /^(nan|inf)/.test(h.trigger));
  // A producer made it (its inputs were clean); without one (the NaN came in with the model input) the first propagator.
  const producers = hits.filter((h) => h.role === 'producer');
  const pick = (nanLike.length ? nanLike : producers.length ? producers : hits).slice().sort((a, b) => (a.order ?? 0) - (b.order ?? 0))[0];
  if (pick) return { id: pick.node_id as number, hit: pick };
  // Without a trigger: the first node in execution order whose output holds a NaN or an Inf.
  let best: { id: number; order: number; e: ProbeNodeEntry } | null = null;
  for (const [id, e] of Object.entries(p?.nodes ?? {})) {
    if (!(e.stats.nan > 0 || e.stats.pos_inf > 0 || e.stats.neg_inf > 0)) continue;
    const order = e.order ?? Number.MAX_SAFE_INTEGER;
    if (!best || order < best.order) best = { id: Number(id), order, e };
  }
  return best ? { id: best.id, hit: { trigger: best.e.stats.nan > 0 ? 'nan' : 'inf', probe: best.e.probe, node: best.e.probe.replace(/:[^:]*$/, ''), role: 'producer' } } : null;
}
