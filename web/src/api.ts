// Typed client of the server's HTTP API (docs/reference/http-api.md); the only
// module that calls fetch. Errors come back as ApiError with the server's
// JSON message, so the UI can show it as is.

import { decodeLayout, type Layout } from './layout_binary';

export interface RunInput { path: string; format: string; role: string }
export interface RunInfo { id: number; name: string; inputs: RunInput[]; levels: string[]; has_trace: boolean }
export interface Attribute { name: string; type: string; value: unknown }
export interface ValueInfo {
  name: string; dtype: string; shape: string | number[] | null; producer?: unknown;
  /** Memory layout where the format gives it (Ascend NC1HWC0, FRACTAL_Z) and the framework's format and shape. */
  layout?: string; origin_layout?: string; origin_shape?: string;
}
export interface NodeRef { id: number; name: string; op_type: string }
export interface TaskInfo { id: number; name: string; start_ns: number; duration_ns: number; track: string | number }
export interface NodeDetails {
  id: number; name: string; op_type: string; domain: string; scope: string;
  attributes: Attribute[]; inputs: ValueInfo[]; outputs: ValueInfo[];
  status: string; fused_from: NodeRef[]; fused_into: NodeRef | null;
  tasks: TaskInfo[]; task_count?: number; task_total_ns?: number;
  /** ONNX operator documentation, when the ONNX library has the op (null otherwise; absent from older servers). */
  doc?: OpDoc | null;
}
export interface OpDoc { domain: string; since_version: number; summary: string }
export type SearchMode = 'text' | 'glob' | 'regex' | 'op';
export interface SearchResult { matches: NodeRef[]; total: number }
export type Grouping = 'scopes' | 'fusion' | 'none';

export interface LayoutRequest {
  run: number; level: string; grouping: Grouping; direction: 'tb' | 'lr';
  maxItems: number; expand: number[]; collapse: number[];
  /** Expand the groups on the path to this model node (server side). */
  reveal?: number | null;
}

/** An API failure: HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

export class Api {
  private readonly token: string | null;

  constructor(private readonly base = '', token?: string | null) {
    // The token arrives once as ?token= on the page URL; keep it for every
    // request as a header (not in later URLs, which end up in logs).
    this.token = token ?? new URLSearchParams(location.search).get('token');
  }

  private async get(path: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.token) headers['X-MI-Token'] = this.token;
    let r: Response;
    try {
      r = await fetch(this.base + path, { headers });
    } catch (e) {
      throw new ApiError(0, `cannot reach the model-inspector server (${(e as Error).message}); is it still running?`);
    }
    if (!r.ok) {
      let message = `${r.status} ${r.statusText} for ${path}`;
      try {
        const j = await r.json();
        if (j && j.error && j.error.message) message = j.error.message;
      } catch { /* not JSON: keep the status line */ }
      throw new ApiError(r.status, message);
    }
    return r;
  }

  private async json<T>(path: string): Promise<T> {
    return (await this.get(path)).json() as Promise<T>;
  }

  async runs(): Promise<RunInfo[]> {
    return (await this.json<{ runs: RunInfo[] }>('/api/runs')).runs;
  }

  summary(run: number): Promise<unknown> {
    return this.json(`/api/runs/${run}/summary`);
  }

  static layoutPath(q: LayoutRequest): string {
    const p = new URLSearchParams();
    p.set('grouping', q.grouping);
    p.set('max_items', String(q.maxItems));
    p.set('direction', q.direction);
    if (q.expand.length) p.set('expand', q.expand.join(','));
    if (q.collapse.length) p.set('collapse', q.collapse.join(','));
    if (q.reveal !== undefined && q.reveal !== null) p.set('reveal', String(q.reveal));
    return `/api/runs/${q.run}/levels/${encodeURIComponent(q.level)}/layout?${p}`;
  }

  async layout(q: LayoutRequest): Promise<Layout> {
    const buf = await (await this.get(Api.layoutPath(q))).arrayBuffer();
    return decodeLayout(buf);
  }

  node(run: number, level: string, node: number): Promise<NodeDetails> {
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/nodes/${node}`);
  }

  /** Model Explorer export of a level: 'graph' (graph JSON) or 'node-data' (our per-node times). */
  async exportModelExplorer(run: number, level: string, what: 'graph' | 'node-data'): Promise<Blob> {
    return (await this.get(`/api/runs/${run}/levels/${encodeURIComponent(level)}/export/model-explorer-${what}`)).blob();
  }

  search(run: number, level: string, q: string, mode: SearchMode): Promise<SearchResult> {
    const p = new URLSearchParams({ q, mode });
    return this.json(`/api/runs/${run}/levels/${encodeURIComponent(level)}/search?${p}`);
  }
}
