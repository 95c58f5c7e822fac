/**
 * Traffic over time: the API's series (top groups + `other`) stacked with uPlot, a legend that is also
 * the series table (name, window total, value under the cursor), and drag-to-zoom that sets the window.
 * Marks `netflow:chart-drawn` after each draw and measures `netflow:chart-redraw` from the data change.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatMetric, groupLabel, type Metric } from './query.js';

/** The `/netflow/series` result. */
export interface SeriesResult {
  step: '1m' | '5m' | '1h';
  metric: Metric;
  points: string[];
  lines: Array<{ key: Record<string, string | number>; total: number; values: number[] }>;
  other: number[];
  total: number[];
}

const COLOURS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#bcbd22',
  '#3b4cc0',
  '#7f7f7f',
];
const OTHER_COLOUR = '#a0a6ad';
const stepped = uPlot.paths.stepped!({ align: 1 });

interface Line {
  name: string;
  colour: string;
  values: number[];
  sum: number;
}

/** The lines to draw, largest first; `other` last, and the total alone when there are no groups. */
export function linesOf(s: SeriesResult): Line[] {
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  if (s.lines.length === 0) return [{ name: 'Total', colour: COLOURS[0]!, values: s.total, sum: sum(s.total) }];
  const out = s.lines.map((l, i) => ({
    name: groupLabel(l.key),
    colour: COLOURS[i % (COLOURS.length - 1)]!,
    values: l.values,
    sum: sum(l.values),
  }));
  if (s.other.some((v) => v !== 0)) out.push({ name: 'other', colour: OTHER_COLOUR, values: s.other, sum: sum(s.other) });
  return out;
}

const STEP_SEC = { '1m': 60, '5m': 300, '1h': 3600 } as const;

/**
 * uPlot data: x in seconds, then the stacked (cumulative) lines, topmost first so lower ones paint
 * over. One more x closes the last step (its end), so the last step is drawn as wide as the others.
 */
function stacked(s: SeriesResult, lines: Line[]): uPlot.AlignedData {
  const xs = s.points.map((p) => Date.parse(p) / 1000);
  const n = xs.length;
  if (n > 0) xs.push(xs[n - 1]! + STEP_SEC[s.step]);
  const cum: number[][] = [];
  let acc = new Array<number>(n).fill(0);
  for (const l of lines) {
    acc = acc.map((a, i) => a + (l.values[i] ?? 0));
    cum.push(n > 0 ? [...acc, acc[n - 1]!] : acc);
  }
  return [xs, ...cum.reverse()];
}

/** Marked when new series data arrives; `netflow:chart-redraw` measures from it to the drawn chart. */
export const REDRAW_START = 'netflow:chart-redraw-start';

let firstRenderMarked = false;

export function TrafficChart({
  series,
  metric,
  onZoom,
}: {
  series: SeriesResult;
  metric: Metric;
  /** Called with the selected span (epoch ms) after a drag over the chart. */
  onZoom: (from: number, to: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shapeOf = useRef('');
  // The chart's hooks outlive a render when data is replaced in place: they read the count here.
  const points = useRef(0);
  points.current = series.points.length;
  const zoom = useRef(onZoom);
  zoom.current = onZoom;
  const [cursor, setCursor] = useState<number | null>(null);
  const lines = linesOf(series);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // The page marks the start when the data arrives; a change that fetched nothing starts here.
    if (performance.getEntriesByName(REDRAW_START).length === 0) performance.mark(REDRAW_START);
    const data = stacked(series, lines);
    const fmt = (v: number) => formatMetric(metric, v);
    const drawn = () => {
      performance.mark('netflow:chart-drawn');
      try {
        performance.measure('netflow:chart-redraw', REDRAW_START, 'netflow:chart-drawn');
      } catch {
        // A resize redraws without a data change: no start mark to measure from.
      }
      if (!firstRenderMarked && series.points.length > 0) {
        firstRenderMarked = true;
        performance.mark('netflow:first-render');
      }
      performance.clearMarks(REDRAW_START);
    };
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: el.clientWidth < 500 ? 220 : 300,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
      scales: { x: { time: true } },
      axes: [
        { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
        { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, size: 80, values: (_u, ticks) => ticks.map(fmt) },
      ],
      series: [
        {},
        ...[...lines].reverse().map((l) => ({
          label: l.name,
          stroke: l.colour,
          fill: `${l.colour}cc`,
          width: 1,
          // Each point is a step's total: drawn as a step, not a slope into the next one.
          paths: stepped,
          points: { show: false },
        })),
      ],
      hooks: {
        draw: [drawn],
        // The closing x is the last step's end: it reads as the last step.
        setCursor: [(u) => setCursor(u.cursor.idx == null ? null : Math.min(u.cursor.idx, points.current - 1))],
        setSelect: [
          (u) => {
            if (u.select.width < 2) return;
            const a = u.posToVal(u.select.left, 'x') * 1000;
            const b = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            zoom.current(a, b);
          },
        ],
      },
    };
    // The same lines of the same metric (a refresh, a shifted window): new data into the same chart.
    const shape = `${metric}|${series.step}|${lines.map((l) => l.name).join('\n')}`;
    if (plot.current && shapeOf.current === shape) {
      plot.current.setData(data);
      return undefined;
    }
    plot.current?.destroy();
    plot.current = new uPlot(opts, data, el);
    shapeOf.current = shape;
    return undefined;
  }, [series, metric]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const u = plot.current;
      if (u && Math.abs(u.width - el.clientWidth) > 4) u.setSize({ width: Math.max(200, el.clientWidth), height: u.height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  const at = cursor !== null && series.points[cursor] ? new Date(series.points[cursor]).toLocaleString() : undefined;
  return (
    <div class="nf-chart">
      <div ref={box} class="nf-plot" aria-hidden="true" />
      <div class="table-box nf-legend">
        <table>
          <caption>
            {metric} per {series.step} step, stacked; drag across the chart to zoom
          </caption>
          <thead>
            <tr>
              <th scope="col">Series</th>
              <th scope="col" class="num">
                Window total
              </th>
              <th scope="col" class="num">
                {at ? `At ${at}` : 'At cursor'}
              </th>
            </tr>
          </thead>
          <tbody>
            {lines.map((l) => (
              <tr key={l.name}>
                <th scope="row">
                  <span class="nf-swatch" style={{ background: l.colour }} />
                  {l.name}
                </th>
                <td class="num">
                  <data value={String(l.sum)}>{formatMetric(metric, l.sum)}</data>
                </td>
                <td class="num">{cursor !== null ? formatMetric(metric, l.values[cursor] ?? 0) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
