// What a view is to the rest of the UI (the "plugin" interface of
// CONVENTIONS.md: views/<name>/index.ts exports one ViewPlugin; main.ts
// lists them explicitly, no self-registration). A view gets the store, the
// API client and the stats through its context, reads the state, draws,
// and dispatches actions for what the user does in it. It never imports
// another view (test/check_imports.mjs): what it shows of a selection made
// elsewhere comes resolved in the state (state.resolved).

import type { Stats } from '../base/stats';
import type { ApiClient } from '../rpc/api';
import type { StoreApi } from './store';

export interface ViewContext {
  readonly store: StoreApi;
  readonly api: ApiClient;
  readonly stats: Stats;
  /** Page options: ?renderer=canvas2d, ?max_items=N, ?fold=budget (overview: false). */
  readonly options: { forceCanvas2d: boolean; maxItems: number; overview?: boolean };
}

/** Where a view lives: the main area (the graph) or a tab of the bottom panel. */
export type ViewSlot = 'main' | 'bottom';

export interface ViewMount {
  /** The element the view fills. */
  root: HTMLElement;
  /** The bottom bar's area for the view's tools, shown while its tab is (bottom views). */
  tools: HTMLElement;
}

export interface ViewPlugin {
  /** Stable id: the bottom tab's `tab=` value in the URL. */
  readonly id: string;
  /** Tab title. */
  readonly title: string;
  readonly slot: ViewSlot;
  create(ctx: ViewContext, mount: ViewMount): ViewInstance;
}

export interface ViewInstance {
  /** The view's area became visible or changed size. */
  resize?(): void;
  /**
   * The live component behind the view, for the debug surface
   * (core/debug.ts): tests read its geometry and drive its camera.
   */
  debugHandle?(): unknown;
  /** The main graph's camera (a saved session keeps it): world point at the top-left corner, zoom. */
  viewport?(): { x: number; y: number; scale: number } | null;
  /** Puts the main graph's camera there once its layout shows (a restored session). */
  restoreViewport?(v: { x: number; y: number; scale: number }): Promise<boolean>;
}
