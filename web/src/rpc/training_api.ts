// A training snapshot as the server answers it (docs/reference/http-api.md
// "Training"; docs/reference/training-snapshot.md): what the snapshot holds,
// one layer's per-step metrics, the tensor-level views of a captured step,
// and the diagnosis (the registered analysis "training_diagnosis",
// docs/reference/schemas/training-diagnosis.schema.json). Types, the
// requests and the few functions that read the answers.

import { fetchApi } from './api';

export interface TrainingLayerJson {
  id: number; name: string; type: string;
  /** The framework node made for the layer (model NodeId), -1 / null when none. */
  node: number | null;
  parent: number | null; forward_order: number | null; param_count: number;
  attributes?: Record<string, unknown>;
}

/** GET /api/runs/{run}/training/overview */
export interface TrainingOverviewJson {
  path: string;
  anomaly_step: number | null;
  captured_steps: number[];
  layers: TrainingLayerJson[];
  histograms: { step: number; layer: number; kind: string }[];
  attention: { step: number; layer: number; heads: number }[];
  projections: { step: number; layer: number; method: string }[];
  samples: number[];
}

/** GET .../training/layers/{layer}/series: one value per step per layer_steps column, null when not measured. */
export interface TrainingSeriesJson {
  layer: number; name: string; steps: number[];
  [metric: string]: unknown;
}

export interface TrainingHistogramJson {
  layer: number; kind: string; lo: number; hi: number; counts: number[]; nan: number; inf: number;
}
export interface TrainingHistogramsJson { step: number; histograms: TrainingHistogramJson[] }

export interface TrainingAttentionJson {
  step: number; layer: number; heads: number; queries: number; keys: number;
  /** [head][query][key] */
  weights: number[][][];
}

export interface TrainingProjectionJson {
  step: number; layer: number; method: string;
  points: { sample: number; x: number; y: number; anomalous: boolean | number }[];
}

export interface TrainingSampleJson {
  sample: number; role: string; score: number | null;
  layers: { layer: number; abs_max: number | null; rms: number | null; nonfinite: number }[];
}
export interface TrainingSamplesJson { step: number; samples: TrainingSampleJson[] }

// ---- the diagnosis (include/model_inspector/results/training.h) ----

// Ids that are -1 in the C++ result (no layer, no step, no node) are null in the JSON.
export interface DiagLayerJson {
  layer: number; name: string; type: string; node: number | null; forward_order: number | null;
  score: number | null; worst_score: number | null; worst_step: number | null; flags: string[];
}
export interface DiagStepJson {
  step: number; loss: number | null; grad_norm: number | null; lr: number | null; score: number | null;
  captured: boolean; events: string[];
}
export interface DiagEvidenceJson { metric: string; layer: number | null; step: number | null; value: number | null; expected: number | null; text: string }
export interface DiagCauseJson {
  cause: string; title: string; layer: number | null; layer_name: string; step: number | null; confidence: number;
  evidence: DiagEvidenceJson[];
  fix: { summary: string; snippet: string; validation: string };
}
export interface DiagChainLinkJson {
  layer: number; layer_name: string; node: number | null; step: number | null; role: string; direction: string; evidence: string;
}
export interface DiagTriggerJson {
  step: number; trigger: string; layer: number | null; layer_name: string; value: number | null; threshold: number | null; detail: string;
}
export interface TrainingDiagnosisJson {
  schema?: string;
  path?: string; model?: string; optimizer?: string; status?: string;
  first_step: number; last_step: number; anomaly_step: number | null; capture_window: number;
  captured_steps: number[];
  triggers: DiagTriggerJson[];
  vanishing?: number; exploding?: number; dead?: number;
  score: number | null;
  layers: DiagLayerJson[];
  steps: DiagStepJson[];
  heatmap: { layers: number[]; steps: number[]; values: (number | null)[][] };
  problem_layers: number[];
  chain: DiagChainLinkJson[];
  causes: DiagCauseJson[];
}

/** The per-layer metrics the sparklines show, with their labels. */
export const kSparkMetrics: readonly { key: string; label: string }[] = [
  { key: 'grad_norm', label: 'grad norm' },
  { key: 'update_ratio', label: 'update ratio' },
  { key: 'act_rms', label: 'act rms' },
  { key: 'dead_fraction', label: 'dead fraction' },
];

/** A layer_steps column of a series answer as numbers (null: not measured). */
export function seriesValues(s: TrainingSeriesJson, key: string): (number | null)[] {
  const v = s[key];
  if (!Array.isArray(v)) return s.steps.map(() => null);
  return v.map((x) => (typeof x === 'number' && Number.isFinite(x) ? x : null));
}

/** Whether an id of the diagnosis is there (null / -1: none). */
export function isId(v: number | null | undefined): v is number {
  return typeof v === 'number' && v >= 0;
}

/** The node id a layer maps to, or null (none made). */
export function layerNode(node: number | null | undefined): number | null {
  return node === null || node === undefined || node < 0 ? null : node;
}

export class TrainingApi {
  private readonly token: string | null;

  constructor(private readonly base = '', token?: string | null) {
    this.token = token ?? new URLSearchParams(location.search).get('token');
  }

  private async json<T>(path: string): Promise<T> {
    return (await fetchApi(this.base, this.token, path)).json() as Promise<T>;
  }

  overview(run: number): Promise<TrainingOverviewJson> {
    return this.json(`/api/runs/${run}/training/overview`);
  }

  series(run: number, layer: number): Promise<TrainingSeriesJson> {
    return this.json(`/api/runs/${run}/training/layers/${layer}/series`);
  }

  histograms(run: number, step: number, layer: number | null = null): Promise<TrainingHistogramsJson> {
    return this.json(`/api/runs/${run}/training/histograms?step=${step}${layer === null ? '' : `&layer=${layer}`}`);
  }

  attention(run: number, step: number, layer: number): Promise<TrainingAttentionJson> {
    return this.json(`/api/runs/${run}/training/attention?step=${step}&layer=${layer}`);
  }

  projection(run: number, step: number, layer: number, method: string): Promise<TrainingProjectionJson> {
    return this.json(`/api/runs/${run}/training/projection?step=${step}&layer=${layer}&method=${encodeURIComponent(method)}`);
  }

  samples(run: number, step: number): Promise<TrainingSamplesJson> {
    return this.json(`/api/runs/${run}/training/samples?step=${step}`);
  }

  diagnosis(run: number): Promise<TrainingDiagnosisJson> {
    return this.json(`/api/runs/${run}/analyses/training_diagnosis`);
  }
}
