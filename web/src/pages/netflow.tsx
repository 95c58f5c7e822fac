/**
 * The netflow page (issue 21): traffic over time by a chosen dimension, top lists, the nfdump filter,
 * the matching flows and the exporters' counters. Everything the page shows is named by the URL
 * (window, filter, dimension, metric, order), so a view can be bookmarked.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useServices } from '../context.js';
import { useLoad } from '../hooks.js';
import { setParams } from '../location.js';
import { ErrorMessage, Field, valueOf } from '../ui.js';
import { Exporters } from './netflow/exporters.js';
import { FlowTable } from './netflow/flow-table.js';
import {
  dimensionOf,
  isoMinute,
  limiter,
  METRICS,
  metricOf,
  PRESETS,
  SERIES_DIMENSIONS,
  stepFor,
  windowOf,
  type FlowWindow,
  type Metric,
} from './netflow/query.js';
import { TopLists } from './netflow/top-lists.js';
import { REDRAW_START, TrafficChart, type SeriesResult } from './netflow/traffic-chart.js';
import './netflow/netflow.css';

// At most three of this page's queries at once (the server queues ten scans; a tab must not take them all).
const queue = limiter(3);

/** A 400 about the filter: the API names the parameter and, for syntax, where in the text. */
function isFilterError(e: Error | undefined): boolean {
  return e instanceof ApiError && e.status === 400 && /'filter'/.test(e.message);
}

/** `datetime-local` value (local time) of an epoch-ms minute, and back. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

function FilterBar({ filter, error }: { filter: string; error: Error | undefined }) {
  const [text, setText] = useState(filter);
  const [applied, setApplied] = useState(filter);
  if (applied !== filter) {
    // Back/forward or a bookmark changed the filter: the box follows the URL.
    setApplied(filter);
    setText(filter);
  }
  const body = error instanceof ApiError ? error.body : undefined;
  const position = typeof body?.position === 'number' ? body.position : undefined;
  return (
    <form
      class="nf-filter"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        setParams({ filter: text.trim() || null });
      }}
    >
      <Field label="Filter (nfdump syntax)" hint={error ? undefined : 'e.g. proto udp and dst port 53 — Enter applies'}>
        {(id, describedBy) => (
          <div class="nf-filter-row">
            <input
              id={id}
              type="text"
              spellcheck={false}
              autocomplete="off"
              value={text}
              placeholder="any"
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? 'nf-filter-error' : describedBy}
              onInput={(e) => setText(valueOf(e))}
            />
            <button type="submit" class="primary">
              Apply
            </button>
            {filter && (
              <button
                type="button"
                onClick={() => {
                  setText('');
                  setParams({ filter: null });
                }}
              >
                Clear
              </button>
            )}
          </div>
        )}
      </Field>
      {error && (
        <div id="nf-filter-error" class="nf-filter-error" role="alert">
          {position !== undefined && !filter.includes('\n') && (
            <pre aria-hidden="true">
              {filter}
              {'\n'}
              {' '.repeat(position)}^
            </pre>
          )}
          <span>{error.message}</span>
        </div>
      )}
    </form>
  );
}

function WindowPicker({ w, now }: { w: FlowWindow; now: () => void }) {
  const [from, setFrom] = useState(localInput(w.from));
  const [to, setTo] = useState(localInput(w.to));
  const [shown, setShown] = useState(`${w.start}|${w.end}`);
  if (shown !== `${w.start}|${w.end}`) {
    setShown(`${w.start}|${w.end}`);
    setFrom(localInput(w.from));
    setTo(localInput(w.to));
  }
  return (
    <div class="nf-window">
      <div role="group" aria-label="Window" class="nf-presets">
        {PRESETS.map((p) => (
          <button
            key={p.id}
            type="button"
            aria-pressed={w.preset === p.id}
            onClick={() => (w.preset === p.id ? now() : setParams({ range: p.id, from: null, to: null }))}
          >
            {p.id}
          </button>
        ))}
      </div>
      <form
        class="row nf-custom"
        onSubmit={(e) => {
          e.preventDefault();
          const a = new Date(from).getTime();
          const b = new Date(to).getTime();
          if (Number.isFinite(a) && Number.isFinite(b))
            setParams({ from: isoMinute(Math.min(a, b)), to: isoMinute(Math.max(a, b)), range: null });
        }}
      >
        <Field label="From">
          {(id) => <input id={id} type="datetime-local" value={from} onInput={(e) => setFrom(valueOf(e))} />}
        </Field>
        <Field label="To">{(id) => <input id={id} type="datetime-local" value={to} onInput={(e) => setTo(valueOf(e))} />}</Field>
        <button type="submit">Show</button>
      </form>
    </div>
  );
}

/**
 * The chart's own component: a new series re-renders it alone, not the lists and the flow table, so a
 * redraw costs the chart. It reports its first answer and a filter mistake up to the page.
 */
function TrafficPanel({
  w,
  filter,
  by,
  metric,
  onState,
}: {
  w: FlowWindow;
  filter: string;
  by: string;
  metric: Metric;
  onState: (answered: boolean, filterError: Error | undefined) => void;
}) {
  const { api } = useServices();
  const step = stepFor(w);
  const series = useLoad(
    (signal) =>
      api
        .get<SeriesResult>(
          'netflow',
          '/series',
          { start: w.start, end: w.end, filter, by: by || undefined, metric, step, limit: 10 },
          signal,
        )
        .then((r) => {
          performance.mark(REDRAW_START);
          return r.result;
        }),
    [w.start, w.end, filter, by, metric, step],
  );
  const filterError = isFilterError(series.error) ? series.error : undefined;
  const answered = series.data !== undefined || series.error !== undefined;
  const report = useRef(onState);
  report.current = onState;
  useEffect(() => report.current(answered, filterError), [answered, filterError]);
  const span = `${new Date(w.from).toLocaleString()} – ${new Date(w.to + 59_999).toLocaleTimeString()}`;
  return (
    <section class="panel" aria-labelledby="nf-traffic" aria-busy={series.loading}>
      <div class="nf-head">
        <h2 id="nf-traffic">Traffic over time</h2>
        <span class="hint">{span}</span>
      </div>
      {series.error && !filterError && <ErrorMessage error={series.error} onRetry={series.reload} />}
      {filterError ? (
        <p class="hint">No chart: the filter above is not valid.</p>
      ) : series.data && !series.error ? (
        <TrafficChart
          series={series.data}
          metric={metric}
          onZoom={(a, b) => setParams({ from: isoMinute(a), to: isoMinute(Math.max(a + 60_000, b)), range: null })}
        />
      ) : (
        !series.error && <p class="busy">Loading…</p>
      )}
    </section>
  );
}

export default function Page({ params }: { path: string; params: URLSearchParams }) {
  const [tick, setTick] = useState(0);
  const range = params.get('range');
  const fromP = params.get('from');
  const toP = params.get('to');
  // A preset ends now: computed when the URL (or Refresh) changes, not on every render.
  const w = useMemo(() => windowOf(params, Date.now()), [range, fromP, toP, tick]);
  const filter = params.get('filter') ?? '';
  const by = dimensionOf(params);
  const metric = metricOf(params);
  const order = params.get('order') === 'bytes' ? 'bytes' : 'time';

  // The chart is asked first and alone among the analytics: the first AS or country query loads
  // their tables, which can hold the server for seconds, and the chart must not wait behind it.
  const [chartAnswered, setChartAnswered] = useState(false);
  const [filterError, setFilterError] = useState<Error>();

  return (
    <div class="nf-page">
      <h1>Traffic</h1>
      <div class="panel nf-controls">
        <div class="row nf-settings">
          <WindowPicker w={w} now={() => setTick((t) => t + 1)} />
          <Field label="Series by">
            {(id) => (
              <select
                id={id}
                value={by}
                onChange={(e) => setParams({ by: valueOf(e) === 'proto' ? null : valueOf(e) || 'total' })}
              >
                {SERIES_DIMENSIONS.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Metric">
            {(id) => (
              <select id={id} value={metric} onChange={(e) => setParams({ metric: valueOf(e) === 'bytes' ? null : valueOf(e) })}>
                {METRICS.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <FilterBar filter={filter} error={filterError} />
      </div>

      <TrafficPanel
        w={w}
        filter={filter}
        by={by}
        metric={metric}
        onState={(answered, error) => {
          if (answered) setChartAnswered(true);
          setFilterError(error);
        }}
      />

      <h2>Top</h2>
      <TopLists window={w} filter={filter} metric={metric} queue={queue} isFilterError={isFilterError} enabled={chartAnswered} />
      <FlowTable window={w} filter={filter} order={order} queue={queue} isFilterError={isFilterError} enabled={chartAnswered} />
      <Exporters />
    </div>
  );
}
