// The store: holds the AppState (state.ts), applies actions with the
// reducer (reducer.ts) and tells subscribers about every change. State
// objects are never mutated: a subscriber compares `state` with `prev` to
// see what changed. An action dispatched by a subscriber while the others
// are being told waits until they all were, so each subscriber sees every
// change in order.

import { reduce } from './reducer';
import type { Action, AppState } from './state';

export type StoreListener = (state: AppState, prev: AppState, action: Action) => void;

/** What views and panels get: read, subscribe, dispatch. */
export interface StoreApi {
  readonly state: AppState;
  /** Bumped on every change. */
  readonly version: number;
  dispatch(action: Action): void;
  /** Returns the unsubscribe function. */
  subscribe(fn: StoreListener): () => void;
}

export class Store implements StoreApi {
  private s: AppState;
  private v = 0;
  private readonly listeners: StoreListener[] = [];
  private readonly queue: Action[] = [];
  private notifying = false;

  constructor(initial: AppState) {
    this.s = initial;
  }

  get state(): AppState { return this.s; }
  get version(): number { return this.v; }

  dispatch(action: Action): void {
    this.queue.push(action);
    if (this.notifying) return;
    this.notifying = true;
    try {
      for (let a = this.queue.shift(); a; a = this.queue.shift()) {
        const prev = this.s;
        const next = reduce(prev, a);
        if (next === prev) continue;
        this.s = next;
        this.v++;
        for (const fn of [...this.listeners]) {
          try {
            fn(next, prev, a);
          } catch (e) {
            // One failing subscriber must not keep the others from the change; the error still surfaces.
            queueMicrotask(() => { throw e; });
          }
        }
      }
    } finally {
      this.notifying = false;
      this.queue.length = 0;
    }
  }

  subscribe(fn: StoreListener): () => void {
    this.listeners.push(fn);
    return () => {
      const k = this.listeners.indexOf(fn);
      if (k >= 0) this.listeners.splice(k, 1);
    };
  }
}
