// Legend: the op types of the current layout with their colours and counts.

import { opColor, rgbCss } from './palette';
import type { Scene } from './scene';

export function renderLegend(el: HTMLElement, scene: Scene | null, onPick: (op: string) => void): void {
  el.textContent = '';
  if (!scene) return;
  const max = 24;
  for (const { op, count } of scene.legend.slice(0, max)) {
    const row = document.createElement('button');
    row.className = 'legend-row';
    row.title = `search op type ${op}`;
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.style.background = rgbCss(opColor(op));
    const name = document.createElement('span');
    name.textContent = op;
    const n = document.createElement('span');
    n.className = 'count';
    n.textContent = String(count);
    row.append(chip, name, n);
    row.addEventListener('click', () => onPick(op));
    el.append(row);
  }
  if (scene.legend.length > max) {
    const more = document.createElement('div');
    more.className = 'muted';
    more.textContent = `${scene.legend.length - max} more op types`;
    el.append(more);
  }
}
