// A peek at one initializer's values, asked for on a click (never
// up front: a weight can be gigabytes): the server reads the first values
// from the model file (or its external data) and min / max / mean over a
// bounded read (GET .../values). Shared by the details panel (a node's
// weight inputs) and the model panel (the list of weights).

import type { ApiClient, TensorValues } from '../rpc/api';
import { el } from '../widgets/dom';

/** Values shown per peek. */
export const kPeekValues = 64;

function fmtNum(v: number | null | undefined): string {
  if (v === null || v === undefined) return 'NaN';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(4) : v.toPrecision(5).replace(/\.?0+$/, '');
}

/** The peek's body: what was read and the values. */
export function valuesBody(t: TensorValues): HTMLElement {
  const root = el('div', 'peek-body');
  root.dataset.peek = t.name;
  const where = t.storage === 'external' && t.external ? `external: ${t.external.location} @${t.external.offset}` : t.storage;
  root.append(el('div', undefined, `${t.dtype} [${t.shape.join('×')}] · ${t.elements.toLocaleString('en')} element(s) · ${where}`));
  const s = t.stats;
  if (s.min !== undefined) {
    const over = s.complete ? `all ${s.count.toLocaleString('en')}` : `first ${s.count.toLocaleString('en')}`;
    root.append(el('div', 'peek-stats', `min ${fmtNum(s.min)} · max ${fmtNum(s.max)} · mean ${fmtNum(s.mean)} (${over}${s.nan ? `, ${s.nan} NaN` : ''})`));
  }
  const more = t.elements > t.values.length ? ` … (${t.values.length} of ${t.elements.toLocaleString('en')})` : '';
  root.append(el('div', 'peek-values', `[${t.values.map(fmtNum).join(', ')}${more}]`));
  return root;
}

/**
 * A "values" button for initializer `name` of `level`; a click fetches the
 * peek once and shows it in `place` (shown / hidden on later clicks).
 */
export function peekButton(api: ApiClient, run: number, level: string, name: string, place: HTMLElement): HTMLButtonElement {
  const b = el('button', 'peek', 'values');
  b.title = `the first ${kPeekValues} values of ${name}, with min / max / mean, read from the model file`;
  b.dataset.peek = name;
  let loaded = false;
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    if (loaded) { place.hidden = !place.hidden; return; }
    loaded = true;
    place.hidden = false;
    place.textContent = '';
    place.append(el('div', 'muted', 'reading…'));
    api.values(run, level, name, kPeekValues).then((t) => {
      place.textContent = '';
      place.append(valuesBody(t));
    }, (err: Error) => {
      loaded = false;
      place.textContent = '';
      place.append(el('div', 'error', err.message));
    });
  });
  return b;
}
