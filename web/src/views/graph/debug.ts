// The graph view's debug handle (core/debug.ts serves it as
// window.__miDebug.view('graph')): the live panes, and geometry questions
// the browser tests and benchmarks ask of them, answered from the panes'
// public state (camera, layout). Nothing in the UI calls these.

import { kGroupExpanded } from '../../rpc/layout_binary';
import type { Pane } from './pane';
import { collectText, edgeLabelRects } from './text_runs';

/** One line of text as drawn: screen position (CSS px, canvas-relative) and font size. */
/** A line of text drawn: baseline position, size and the width it may take (screen px; longer is cut). */
export interface TextLine { x: number; y: number; px: number; text: string; bold: boolean; max: number }

export interface GraphDebugHandle {
  /** Pane `k` (0 = main, 1 = compare), or null. */
  pane(k?: number): Pane | null;
  /** Screen position (CSS px, relative to the pane's canvas) of the centre of item `i`. */
  itemScreenCenter(i: number, k?: number): { x: number; y: number } | null;
  /** Screen position of a point in the header of frame (group) `g`. */
  groupHeaderScreen(g: number, k?: number): { x: number; y: number } | null;
  /** Groups expanded in the pane's layout. */
  expandedGroups(k?: number): number[];
  /** Whether group `g` is expanded in the pane's layout. */
  isExpanded(g: number, k?: number): boolean;
  /** A canvas point over no item and no frame (a click there clears the selection), or null. */
  emptyPoint(k?: number): { x: number; y: number } | null;
  /**
   * The text the renderers draw at the pane's current camera (the same
   * collectText pass), in screen terms, and the edge labels' boxes
   * (screen x, y, w, h).
   */
  textRuns(k?: number): { lines: TextLine[]; edgeLabels: number[][] } | null;
}

export function graphDebugHandle(panes: readonly Pane[]): GraphDebugHandle {
  const pane = (k = 0): Pane | null => panes[k] ?? null;
  return {
    pane,
    itemScreenCenter(i, k = 0) {
      const p = pane(k), l = p?.scene?.layout;
      if (!p || !l || i < 0 || i >= l.itemCount) return null;
      const b = l.itemBox;
      return { x: p.cam.toScreenX(b[4 * i] + b[4 * i + 2] / 2), y: p.cam.toScreenY(b[4 * i + 1] + b[4 * i + 3] / 2) };
    },
    groupHeaderScreen(g, k = 0) {
      const p = pane(k), l = p?.scene?.layout;
      if (!p || !l || g < 0 || g >= l.groupCount) return null;
      const b = l.groupBounds;
      return { x: p.cam.toScreenX(b[4 * g] + Math.min(40, b[4 * g + 2] / 2)), y: p.cam.toScreenY(b[4 * g + 1] + 10) };
    },
    expandedGroups(k = 0) {
      const l = pane(k)?.scene?.layout, out: number[] = [];
      if (l) for (let g = 1; g < l.groupCount; ++g) if (l.groupFlags[g] & kGroupExpanded) out.push(g);
      return out;
    },
    isExpanded(g, k = 0) {
      const l = pane(k)?.scene?.layout;
      return !!l && g >= 0 && g < l.groupCount && (l.groupFlags[g] & kGroupExpanded) !== 0;
    },
    textRuns(k = 0) {
      const p = pane(k), s = p?.scene;
      if (!p || !s) return null;
      const c = p.cam, lines: TextLine[] = [];
      const sink = {
        text(x: number, y: number, size: number, bold: boolean, _a: number, max: number, text: string): void {
          lines.push({ x: c.toScreenX(x), y: c.toScreenY(y), px: size * c.scale, text, bold, max: max * c.scale });
        },
      };
      collectText(s, c.toWorldX(0), c.toWorldY(0), c.toWorldX(c.viewW), c.toWorldY(c.viewH), c.scale,
        new Uint32Array(s.layout.itemCount), 1, sink);
      const edgeLabels: number[][] = [];
      for (let i = 0; i < edgeLabelRects.length; i += 4) {
        edgeLabels.push([c.toScreenX(edgeLabelRects[i]), c.toScreenY(edgeLabelRects[i + 1]), edgeLabelRects[i + 2] * c.scale, edgeLabelRects[i + 3] * c.scale]);
      }
      return { lines, edgeLabels };
    },
    emptyPoint(k = 0) {
      const p = pane(k), s = p?.scene;
      if (!p || !s) return null;
      for (let y = 6; y < p.cam.viewH; y += 17) {
        for (let x = 6; x < p.cam.viewW - 160; x += 23) {
          const wx = p.cam.toWorldX(x), wy = p.cam.toWorldY(y);
          if (s.itemAt(wx, wy) < 0 && s.frameAt(wx, wy) < 0) return { x, y };
        }
      }
      return null;
    },
  };
}
