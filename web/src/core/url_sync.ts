// The one place the URL hash is written and read. Every state change
// recomputes the hash from the state (formatHash of urlStateOf); changes
// made in one burst are coalesced into one history.replaceState at the end
// of the current task (a microtask), so the hash is current by the time any
// other task (an event, a test's evaluate) runs. A hash the user edits
// (hashchange) is parsed back and dispatched as `urlChanged`.

import type { StoreApi } from './store';
import { urlStateOf } from './state';
import { formatHash, parseHash } from './url_state';

export class UrlSync {
  private scheduled = false;
  private written = '';

  constructor(private readonly store: StoreApi, private readonly win: Window = window) {
    store.subscribe(() => this.schedule());
    win.addEventListener('hashchange', () => this.read());
    this.write();
  }

  /** The hash the current state gives. */
  hash(): string {
    const s = this.store.state;
    return formatHash(urlStateOf(s), s.tabs);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => { this.scheduled = false; this.write(); });
  }

  private write(): void {
    const h = this.hash();
    this.written = h;
    if (this.win.location.hash !== h) this.win.history.replaceState(null, '', h);
  }

  private read(): void {
    const h = this.win.location.hash;
    if (h === this.written || h === this.hash()) return;
    this.store.dispatch({ type: 'urlChanged', url: parseHash(h, this.store.state.tabs) });
    this.write();
  }
}
