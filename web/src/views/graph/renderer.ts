// The one drawing interface, with a WebGL2 back end (renderer_webgl.ts) and a
// Canvas2D fallback (renderer_canvas2d.ts). A renderer draws a Scene through
// the Camera; it owns no application state besides highlights.

import type { Camera } from './camera';
import type { Scene } from './scene';

export interface Highlights {
  /** The selected item, or -1. */
  selected: number;
  /** Items matching the current search. */
  matches: ArrayLike<number>;
  /** Ancestors / descendants of the selection (items) and the edges between them. */
  lineage?: ArrayLike<number>;
  lineageEdges?: ArrayLike<number>;
  /** Items linked to the other pane's selection (compare mode: fused_from / fused_into). */
  linked?: ArrayLike<number>;
}

export const kNoHighlights: Highlights = { selected: -1, matches: [] };

/** Per edge, its highlight level: 1 = an edge of the selection, 2 = on the lineage. */
export function edgeHighlights(scene: Scene, h: Highlights): Map<number, number> {
  const m = new Map<number, number>();
  if (h.lineageEdges) for (let k = 0; k < h.lineageEdges.length; ++k) m.set(h.lineageEdges[k], 2);
  const own: number[] = [];
  edgesOfItem(scene, h.selected, own);
  for (const e of own) m.set(e, 1);
  return m;
}

export interface Renderer {
  readonly kind: 'webgl2' | 'canvas2d';
  setScene(scene: Scene | null): void;
  setHighlights(h: Highlights): void;
  /** Sizes the backing store: CSS size times devicePixelRatio. */
  resize(cssW: number, cssH: number, dpr: number): void;
  render(cam: Camera): void;
  /** The canvas drawn into (for PNG export). */
  readonly canvas: HTMLCanvasElement;
  /** CPU time of the last render() (ms): the renderer's own work, without the compositor. */
  readonly lastFrameMs: number;
  dispose(): void;
}

/** Edges touching item `i` (for highlighting a selection). */
export function edgesOfItem(scene: Scene, i: number, out: number[]): void {
  const l = scene.layout;
  out.length = 0;
  if (i < 0) return;
  for (let e = 0; e < l.edgeCount; ++e) if (l.edgeFrom[e] === i || l.edgeTo[e] === i) out.push(e);
}
