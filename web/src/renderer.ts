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
}

export interface Renderer {
  readonly kind: 'webgl2' | 'canvas2d';
  setScene(scene: Scene | null): void;
  setHighlights(h: Highlights): void;
  /** Sizes the backing store: CSS size times devicePixelRatio. */
  resize(cssW: number, cssH: number, dpr: number): void;
  render(cam: Camera): void;
  dispose(): void;
}

/** Edges touching item `i` (for highlighting a selection). */
export function edgesOfItem(scene: Scene, i: number, out: number[]): void {
  const l = scene.layout;
  out.length = 0;
  if (i < 0) return;
  for (let e = 0; e < l.edgeCount; ++e) if (l.edgeFrom[e] === i || l.edgeTo[e] === i) out.push(e);
}
