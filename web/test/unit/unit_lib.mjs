// Shared by the Node unit tests (test/unit/*_test.mjs): compiles entry.ts
// (the core modules: URL state, reducer, store, selection controller) with
// vite's library build into a temp dir and imports it, and a small helper
// to wait for a store state.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const webDir = resolve(here, '../..');

export async function importCore() {
  const { build } = await import('vite');
  const out = mkdtempSync(join(tmpdir(), 'mi-web-unit-'));
  await build({
    configFile: false,
    logLevel: 'error',
    root: webDir,
    build: {
      outDir: out, emptyOutDir: true, minify: false, target: 'es2022',
      lib: { entry: join(here, 'entry.ts'), formats: ['es'], fileName: () => 'core.mjs' },
    },
  });
  return import(pathToFileURL(join(out, 'core.mjs')).href);
}

/** Resolves with the store's state once `pred(state)` holds (rejects after `ms`). */
export function until(store, pred, what = 'state', ms = 5000) {
  return new Promise((resolveP, reject) => {
    if (pred(store.state)) { resolveP(store.state); return; }
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    const off = store.subscribe((s) => {
      if (!pred(s)) return;
      clearTimeout(timer);
      off();
      resolveP(s);
    });
  });
}
