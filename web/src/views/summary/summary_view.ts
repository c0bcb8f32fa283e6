// Summary view: the op-type table of `summary` (count, total, average,
// share; the data movement and layout conversion rows as the summary gives
// them; sync rows are waits, shown without a share and without a bar), a
// bar chart of time per op type (SVG), per-stream busy / idle, the
// whole-trace analyses summary.json carries (idle time by cause per device
// stream, copy / compute overlap per device, host synchronize waits, the
// memory estimate, the critical path with its top op types), and — when the
// server's analyses have them (GET /analyses, GET /critical-path; an older
// server answers 404 and the sections stay away) — the critical path's tasks
// for the "show" button and the diagnosis findings, whose entries select
// their evidence. An area selection on the timeline switches the view to the
// summary of that time range (GET /summary?from_ns&to_ns&clock, asked by the
// selection controller) until it is cleared; range summaries carry no
// whole-trace sections, so those hide. Clicking an op-type row or bar
// selects that op type.

import { fmtBytes, fmtNs, pct, usNs } from '../../base/format';
import { opColor, rgbCss } from '../../base/palette';
import {
  findingIds, type AnalysesJson, type ApiClient, type CriticalPathJson, type FindingJson, type SummaryJson, type SummaryMemory, type SummaryOpType,
} from '../../rpc/api';
import { el } from '../../widgets/dom';

export interface SummaryHost {
  readonly api: ApiClient;
  selectOpType(op: string): void;
  selectFinding(index: number, f: FindingJson): void;
  /** Draws the critical path on graph and timeline (null clears). */
  showCriticalPath(path: CriticalPathJson | null): void;
  clearRange(): void;
  error(message: string): void;
}

const kSvg = 'http://www.w3.org/2000/svg';

export class SummaryView {
  private summary: SummaryJson | null = null;
  /** The summary of the selected range, when one is. */
  private rangeSummary: SummaryJson | null = null;
  private range: { startNs: number; endNs: number; clock: string } | null = null;
  private analyses: AnalysesJson | null = null;
  private criticalPath: CriticalPathJson | null = null;
  private findings: FindingJson[] = [];
  private selectedOp: string | null = null;
  private selectedFinding = -1;
  /** The critical path is drawn on graph and timeline ("show" pressed). */
  private pathShown = false;
  private originNs = 0;
  private loadSeq = 0;
  /** Resolves when the run's summary and analyses are in. */
  private loaded: Promise<void> = Promise.resolve();

  constructor(private readonly root: HTMLElement, private readonly host: SummaryHost) {
    root.classList.add('summary-view');
  }

  /** Loads the summary and analyses of run `run`. */
  open(run: number, originNs = 0): Promise<void> {
    this.originNs = originNs;
    this.range = null;
    this.rangeSummary = null;
    const seq = ++this.loadSeq;
    this.root.textContent = 'loading the summary…';
    this.loaded = (async () => {
      const [summary, analyses] = await Promise.all([
        this.host.api.summary(run),
        this.host.api.analyses(run).catch((e: Error) => { this.host.error(`analyses: ${e.message}`); return null; }),
      ]);
      if (seq !== this.loadSeq) return;
      this.summary = summary;
      this.analyses = analyses;
      this.findings = analyses?.findings ?? [];
      const cp = analyses?.critical_path;
      this.criticalPath = cp && Array.isArray(cp.tasks) ? cp as CriticalPathJson : null;
      if (!this.criticalPath && summary.tasks > 0) {
        this.criticalPath = await this.host.api.criticalPath(run, 'calibrated').catch(() => null);
      }
      if (seq !== this.loadSeq) return;
      this.render();
    })().catch((e: Error) => {
      if (seq !== this.loadSeq) return;
      this.root.textContent = '';
      this.root.append(el('div', 'error', `summary: ${e.message}`));
    });
    return this.loaded;
  }

  /** Shows `s`, the summary of [startNs, endNs) in `clock` (the timeline's area selection). */
  showRange(s: SummaryJson, startNs: number, endNs: number, clock: string): void {
    if (this.rangeSummary === s) return;
    this.range = { startNs, endNs, clock };
    this.rangeSummary = s;
    this.render();
  }

  clearRange(): void {
    if (!this.range) return;
    this.range = null;
    this.rangeSummary = null;
    this.render();
  }

  /** The run's critical path (null before it is in, or when the run has none). */
  path(): CriticalPathJson | null { return this.criticalPath; }

  /** Whether the critical path is drawn (the "show" button's state). */
  setPathShown(on: boolean): void {
    this.pathShown = on;
    for (const b of Array.from(this.root.querySelectorAll<HTMLElement>('button.show-critical-path'))) b.classList.toggle('active', on);
  }

  setSelection(opType: string | null, finding: number): void {
    this.selectedOp = opType;
    this.selectedFinding = finding;
    for (const r of Array.from(this.root.querySelectorAll<HTMLElement>('[data-op]'))) r.classList.toggle('selected', r.dataset.op === opType);
    for (const r of Array.from(this.root.querySelectorAll<HTMLElement>('[data-finding]'))) r.classList.toggle('selected', Number(r.dataset.finding) === finding);
  }

  private render(): void {
    const s = this.rangeSummary ?? this.summary;
    this.root.textContent = '';
    if (!s) return;
    const head = el('div', 'view-bar summary-head');
    if (this.range) {
      const r = this.range;
      head.append(el('b', undefined, `Range ${fmtNs(r.startNs - this.originNs)} – ${fmtNs(r.endNs - this.originNs)}`),
        el('span', 'muted', `(${fmtNs(r.endNs - r.startNs)}, ${r.clock} clock)`));
      const b = el('button', 'summary-whole', 'whole run');
      b.title = 'clear the range selection';
      b.addEventListener('click', () => this.host.clearRange());
      head.append(b);
    } else {
      head.append(el('b', undefined, 'Whole run'));
    }
    head.append(el('span', 'muted', `${s.tasks} tasks · ${usNs(s.total_us)} task time · basis: ${s.basis}` +
      (s.unlinked_tasks ? ` · ${s.unlinked_tasks} unlinked` : '')));
    this.root.append(head);
    const cols = el('div', 'summary-cols');
    const left = el('div', 'summary-col');
    const right = el('div', 'summary-col');
    cols.append(left, right);
    this.root.append(cols);
    left.append(el('h3', undefined, 'Time per op type'), this.chart(s.op_types), this.opTable(s.op_types));
    right.append(el('h3', undefined, 'Streams'), this.streamTable(s));
    if (!this.range) this.wholeTraceSections(s, right);
    if (this.analyses && !this.range) {
      right.append(el('h3', undefined, `Findings (${this.findings.length})`));
      if (!this.findings.length) right.append(el('div', 'muted', 'no findings'));
      const ul = el('ul', 'findings');
      this.findings.forEach((f, k) => {
        const li = el('li', `finding severity-${f.severity}`);
        li.dataset.finding = String(k);
        const nodes = findingIds(f.nodes).length, tasks = findingIds(f.tasks).length;
        li.append(el('span', 'severity', f.severity), el('span', 'finding-msg', f.message),
          el('span', 'muted', ` ${f.rule}${nodes || tasks ? ` · evidence: ${nodes} node(s), ${tasks} task(s)` : ''}`));
        li.title = f.suggestion ?? '';
        li.addEventListener('click', () => this.host.selectFinding(k, f));
        ul.append(li);
      });
      right.append(ul);
    }
    this.setSelection(this.selectedOp, this.selectedFinding);
  }

  /**
   * The whole-trace analyses of summary.json, each section only when the
   * summary carries it (range summaries and older servers do not).
   */
  private wholeTraceSections(s: SummaryJson, right: HTMLElement): void {
    const idleStreams = s.streams.filter((st) => st.idle);
    if (idleStreams.length) right.append(el('h3', undefined, 'Idle time by cause'), this.idleTable(idleStreams));
    this.criticalPathSection(s, right);
    if (s.overlap?.length) {
      right.append(el('h3', undefined, 'Copy / compute overlap'));
      const t = el('table', 'summary-overlap');
      const hr = el('tr');
      for (const h of ['device', 'compute', 'data movement', 'overlapped', 'share of data movement']) hr.append(el('th', undefined, h));
      t.append(hr);
      for (const o of s.overlap) {
        const tr = el('tr');
        tr.dataset.device = o.device;
        tr.append(el('td', undefined, o.device), el('td', 'num', usNs(o.compute_us)), el('td', 'num', usNs(o.data_movement_us)),
          el('td', 'num', usNs(o.overlap_us)), el('td', 'num', pct(o.overlap_share)));
        t.append(tr);
      }
      right.append(t);
    }
    if (s.host_sync) {
      const h = s.host_sync;
      right.append(el('h3', undefined, 'Host synchronize'));
      right.append(el('div', 'host-sync', h.calls
        ? `${h.calls} call(s) blocked the host for ${usNs(h.total_us)}; device idle meanwhile ${usNs(h.device_idle_us)}`
        : 'no host synchronize calls in the trace'));
    }
    if (s.memory) right.append(el('h3', undefined, 'Memory (estimate)'), this.memoryLine(s.memory));
  }

  /** Idle time of each device stream split by cause, as numbers and a stacked bar. */
  private idleTable(streams: SummaryJson['streams']): HTMLElement {
    const t = el('table', 'summary-idle');
    const hr = el('tr');
    const heads = [['stream', ''], ['idle', 'span - busy'], ['host launch', 'waiting for the host to launch work'],
      ['other stream', 'waiting on another stream'], ['other', 'idle for no cause the trace shows']];
    for (const [h, title] of heads) {
      const th = el('th', undefined, h);
      th.title = title;
      hr.append(th);
    }
    t.append(hr);
    const causes = [['waiting_host_us', 'idle-host'], ['waiting_other_stream_us', 'idle-stream'], ['other_us', 'idle-other']] as const;
    for (const st of streams) {
      const idle = st.idle!;
      const tr = el('tr');
      tr.dataset.stream = String(st.stream_id);
      const total = el('td', 'num idle-total', usNs(idle.total_us));
      const bar = el('div', 'idle-bar');
      bar.title = 'waiting on host launch / on another stream / other';
      for (const [key, cls] of causes) {
        const part = el('div', cls);
        part.style.width = `${idle.total_us > 0 ? Math.min(100, (idle[key] / idle.total_us) * 100) : 0}%`;
        bar.append(part);
      }
      total.append(bar);
      tr.append(el('td', undefined, st.name), total);
      for (const [key, cls] of causes) {
        const td = el('td', 'num');
        const chip = el('span', `chip ${cls}`);
        td.append(chip, ` ${usNs(idle[key])}`);
        tr.append(td);
      }
      t.append(tr);
    }
    return t;
  }

  private memoryLine(m: SummaryMemory): HTMLElement {
    const line = el('div', 'memory-line');
    line.append('peak activations ', el('b', 'memory-peak', fmtBytes(m.peak_activation_bytes)),
      ` · weights ${fmtBytes(m.weight_bytes)}`);
    if (m.reported_peak_bytes !== null) line.append(` · allocator's reported peak ${fmtBytes(m.reported_peak_bytes)}`);
    line.append(el('span', 'muted', ` (${m.level} graph, ${m.order} order)`));
    return line;
  }

  /**
   * The critical path: the figures of summary.critical_path when the summary
   * has them (else of the analyses' path), and the "show" button when the
   * analyses gave the path's tasks.
   */
  private criticalPathSection(s: SummaryJson, right: HTMLElement): void {
    const path = this.criticalPath;
    const fromSummary = s.critical_path;
    if (!fromSummary && !path) return;
    right.append(el('h3', undefined, 'Critical path'));
    const p = el('div', 'critical-path');
    const share = fromSummary ? fromSummary.share : path!.share;
    const length = fromSummary ? usNs(fromSummary.length_us) : fmtNs(path!.length_ns);
    const wall = fromSummary ? usNs(fromSummary.wall_us) : fmtNs(path!.wall_ns);
    const tasks = fromSummary ? fromSummary.tasks : path!.tasks.length;
    p.append(el('span', 'cp-share', pct(share)), el('span', undefined, ` of the wall time (${length} of ${wall}), ${tasks} tasks `));
    if (path) {
      const show = el('button', 'show-critical-path', 'show');
      show.title = 'highlight the critical path on the graph and the timeline';
      show.classList.toggle('active', this.pathShown);
      show.addEventListener('click', () => this.host.showCriticalPath(this.pathShown ? null : path));
      p.append(show);
    }
    right.append(p);
    if (fromSummary?.top_op_types.length) {
      const top = el('div', 'cp-top muted');
      top.append('on the path: ');
      fromSummary.top_op_types.forEach((o, k) => {
        if (k) top.append(' · ');
        const chip = el('span', 'chip');
        chip.style.background = rgbCss(opColor(o.op_type));
        top.append(chip, ` ${o.op_type} ${usNs(o.us)}`);
      });
      right.append(top);
    }
  }

  private opTable(ops: SummaryOpType[]): HTMLElement {
    const t = el('table', 'summary-ops');
    const hr = el('tr');
    for (const h of ['op type', 'kind', 'nodes', 'calls', 'total', 'average', 'share']) hr.append(el('th', undefined, h));
    t.append(hr);
    for (const o of ops) {
      const tr = el('tr', 'op-row');
      tr.dataset.op = o.op_type;
      const name = el('td');
      const chip = el('span', 'chip');
      chip.style.background = rgbCss(opColor(o.op_type));
      name.append(chip, ` ${o.op_type}`);
      // Syncs and waits are not work: apart from the total the shares are of.
      const wait = o.kind === 'sync';
      if (wait) tr.classList.add('sync-row');
      const share = el('td', 'num', wait ? 'wait' : pct(o.share));
      if (wait) share.title = 'time streams spent waiting: not in the total';
      tr.append(name, el('td', 'muted', o.kind.replace(/_/g, ' ')), el('td', 'num', String(o.nodes)), el('td', 'num', String(o.calls)),
        el('td', 'num', usNs(o.total_us)), el('td', 'num', usNs(o.average_us)), share);
      tr.addEventListener('click', () => this.host.selectOpType(o.op_type));
      t.append(tr);
    }
    return t;
  }

  /** Horizontal bars, one per op type (the 16 largest), length = total time; waits (kind sync) are no op's time and have no bar. */
  private chart(ops: SummaryOpType[]): SVGSVGElement {
    const top = ops.filter((o) => o.kind !== 'sync').sort((a, b) => b.total_us - a.total_us).slice(0, 16);
    const rowH = 16, labelW = 150, barW = 220, valueW = 140;
    const svg = document.createElementNS(kSvg, 'svg');
    svg.setAttribute('class', 'op-chart');
    svg.setAttribute('width', String(labelW + barW + valueW));
    svg.setAttribute('height', String(top.length * rowH + 4));
    const max = Math.max(1e-9, ...top.map((o) => o.total_us));
    top.forEach((o, k) => {
      const g = document.createElementNS(kSvg, 'g');
      g.setAttribute('data-op', o.op_type);
      g.setAttribute('class', 'bar');
      const y = k * rowH + 2;
      const label = document.createElementNS(kSvg, 'text');
      label.setAttribute('x', String(labelW - 6));
      label.setAttribute('y', String(y + 11));
      label.setAttribute('text-anchor', 'end');
      label.textContent = o.op_type.length > 22 ? o.op_type.slice(0, 21) + '…' : o.op_type;
      const rect = document.createElementNS(kSvg, 'rect');
      rect.setAttribute('x', String(labelW));
      rect.setAttribute('y', String(y + 1));
      rect.setAttribute('height', String(rowH - 4));
      rect.setAttribute('width', String(Math.max(1, (o.total_us / max) * barW)));
      rect.setAttribute('fill', rgbCss(opColor(o.op_type)));
      const value = document.createElementNS(kSvg, 'text');
      value.setAttribute('x', String(labelW + (o.total_us / max) * barW + 4));
      value.setAttribute('y', String(y + 11));
      value.textContent = `${usNs(o.total_us)} · ${pct(o.share)}`;
      const title = document.createElementNS(kSvg, 'title');
      title.textContent = `${o.op_type}: ${usNs(o.total_us)} in ${o.calls} call(s)`;
      g.append(title, label, rect, value);
      g.addEventListener('click', () => this.host.selectOpType(o.op_type));
      svg.append(g);
    });
    return svg;
  }

  private streamTable(s: SummaryJson): HTMLElement {
    const t = el('table', 'summary-streams');
    const hr = el('tr');
    for (const h of ['stream', 'kind', 'tasks', 'busy', 'idle', 'busy share']) hr.append(el('th', undefined, h));
    t.append(hr);
    for (const st of s.streams) {
      const tr = el('tr');
      tr.dataset.stream = String(st.stream_id);
      const bar = el('div', 'busy-bar');
      const fill = el('div', 'busy-fill');
      fill.style.width = `${Math.min(100, st.utilisation * 100)}%`;
      bar.append(fill);
      const share = el('td', 'num', pct(st.utilisation));
      share.append(bar);
      tr.append(el('td', undefined, st.name), el('td', 'muted', st.kind.replace(/_/g, ' ')), el('td', 'num', String(st.tasks)),
        el('td', 'num', usNs(st.busy_us)), el('td', 'num', usNs(Math.max(0, st.span_us - st.busy_us))), share);
      t.append(tr);
    }
    return t;
  }
}
