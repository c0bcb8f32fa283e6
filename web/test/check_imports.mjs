// The UI's layering, checked on every test run (CONVENTIONS.md "Layering is
// mechanical"; modelled on tools/check_layering.py and Perfetto's
// check_imports): every import between modules of web/src must be an edge
// the table below allows. Views never import each other; what they share
// lives in base/, widgets/ or core/'s public files. An edge that is known
// to break the rule is listed under DEBT, visibly, with why; the check
// fails on any other, and on a debt entry that no longer occurs.
//
//   node test/check_imports.mjs          (run by test/run_all.sh)

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = join(webDir, 'src');

// core/'s files that views and panels may use: the state, its actions and
// store, the selection, the view interface. The rest of core (reducer,
// selection controller, URL state and sync, debug surface) is main.ts's.
const kCorePublic = new Set(['core/state.ts', 'core/store.ts', 'core/selection.ts', 'core/view.ts']);

// group -> groups it may import ("views/*" = its own view folder).
const ALLOWED = {
  'base': ['base'],
  'rpc': ['base', 'rpc'],
  'widgets': ['base', 'widgets'],
  'core': ['base', 'rpc', 'core', 'core/internal'],
  'core/internal': ['base', 'rpc', 'core', 'core/internal'],
  'components': ['base', 'rpc', 'widgets', 'core', 'components'],
  'views/*': ['base', 'rpc', 'widgets', 'core', 'views/*'],
  'main': ['base', 'rpc', 'widgets', 'core', 'core/internal', 'components', 'views', 'main'],
};

// Known violations: "from -> to" (files relative to src/) and why. Aim: none.
const DEBT = {};

/** The group of a file relative to src/ ("views/graph/pane.ts" → views/graph). */
export function groupOf(rel) {
  const parts = rel.split('/');
  if (parts.length === 1) return rel === 'main.ts' ? 'main' : `unknown:${rel}`;
  if (parts[0] === 'views') return parts.length > 2 ? `views/${parts[1]}` : `unknown:${rel}`;
  if (parts[0] === 'core') return kCorePublic.has(rel) ? 'core' : 'core/internal';
  if (['base', 'rpc', 'widgets', 'components'].includes(parts[0])) return parts[0];
  return `unknown:${rel}`;
}

/** Whether group `from` may import group `to`. */
export function allowed(from, to) {
  if (from.startsWith('unknown:') || to.startsWith('unknown:')) return false;
  if (from.startsWith('views/')) {
    if (to.startsWith('views/')) return to === from;
    return ALLOWED['views/*'].includes(to);
  }
  const may = ALLOWED[from] ?? [];
  return may.includes(to) || (to.startsWith('views/') && may.includes('views'));
}

// The rule itself, on made-up edges, so that a broken table cannot pass silently.
const kSelfTest = [
  ['views/timeline/index.ts', 'views/graph/pane.ts', false],
  ['views/timeline/index.ts', 'views/timeline/timeline_view.ts', true],
  ['views/mapping/index.ts', 'core/state.ts', true],
  ['views/mapping/index.ts', 'core/reducer.ts', false],
  ['views/summary/index.ts', 'components/details_panel.ts', false],
  ['components/toolbar.ts', 'views/graph/index.ts', false],
  ['core/state.ts', 'views/graph/pane.ts', false],
  ['base/format.ts', 'rpc/api.ts', false],
  ['rpc/api.ts', 'core/state.ts', false],
  ['widgets/dom.ts', 'core/state.ts', false],
  ['main.ts', 'views/graph/index.ts', true],
  ['main.ts', 'core/reducer.ts', true],
];
for (const [a, b, want] of kSelfTest) {
  if (allowed(groupOf(a), groupOf(b)) !== want) {
    console.error(`FAIL: check_imports self-test: ${a} -> ${b} should be ${want ? 'allowed' : 'refused'}`);
    process.exit(1);
  }
}

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts')) yield p;
  }
}

// import ... from '...'; export ... from '...'; import '...'; import('...')
const kImport = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

const errors = [];
const debtSeen = new Set();
let edges = 0;
for (const file of tsFiles(srcDir)) {
  const rel = relative(srcDir, file).split('\\').join('/');
  const from = groupOf(rel);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(kImport)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue; // packages, and the palette's JSON outside src/ (checked below)
    const target = resolve(dirname(file), spec);
    const trel = relative(srcDir, target).split('\\').join('/');
    if (trel.startsWith('..')) {
      if (!(rel === 'base/palette.ts' && trel === '../../src/layout/op_palette.json')) errors.push(`${rel}: imports ${spec}, outside web/src`);
      continue;
    }
    // './x' is x.ts or x/index.ts; './style.css' is the stylesheet (main.ts's).
    const toFile = /\.(ts|css|json)$/.test(trel) ? trel : existsSync(`${target}.ts`) ? `${trel}.ts` : `${trel}/index.ts`;
    if (toFile === 'style.css' && rel === 'main.ts') continue;
    if (!existsSync(join(srcDir, toFile))) { errors.push(`${rel}: imports ${spec}, which is not a file of web/src`); continue; }
    const to = groupOf(toFile);
    edges++;
    if (from === to || allowed(from, to)) continue;
    const key = `${rel} -> ${toFile}`;
    if (key in DEBT) { debtSeen.add(key); continue; }
    errors.push(`${rel} (${from}) imports ${toFile} (${to}): not allowed; ${from} may import ${(from.startsWith('views/') ? ALLOWED['views/*'] : ALLOWED[from] ?? []).join(', ')}`);
  }
}
for (const key of Object.keys(DEBT)) if (!debtSeen.has(key)) errors.push(`debt entry no longer occurs, remove it: ${key}`);
console.log(`  import debt: ${Object.keys(DEBT).length ? Object.entries(DEBT).map(([k, v]) => `${k} (${v})`).join('; ') : 'none'}`);
if (errors.length) {
  for (const e of errors) console.error(`  ${e}`);
  console.error(`FAIL: check_imports: ${errors.length} forbidden import(s)`);
  process.exit(1);
}
console.log(`PASS: check_imports (${edges} imports between modules of web/src)`);
