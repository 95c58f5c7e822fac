/** Top talkers, destinations, ports, protocols, AS and countries as bars, from `/netflow/top`. */
import { useLoad } from '../../hooks.js';
import { useServices } from '../../context.js';
import { ErrorMessage } from '../../ui.js';
import { formatMetric, groupLabel, type FlowWindow, type Metric } from './query.js';

interface Counts {
  flows: number;
  packets: number;
  bytes: number;
}

/** The `/netflow/top` result. */
export interface TopResult {
  rows: Array<Record<string, string | number> & Counts>;
  other: Counts;
  total: Counts;
  groups: number;
}

export const TOP_LISTS: ReadonlyArray<{ by: string; title: string }> = [
  { by: 'src_ip', title: 'Top talkers' },
  { by: 'dst_ip', title: 'Top destinations' },
  { by: 'dst_port', title: 'Destination ports' },
  { by: 'proto', title: 'Protocols' },
  { by: 'src_as', title: 'Source AS' },
  { by: 'src_country', title: 'Source countries' },
];

/** The group of a top row: its dimension's value, named as the chart names it. */
export function topRowLabel(by: string, row: Record<string, string | number>): string {
  return groupLabel({ [by]: row[by] ?? '' });
}

function TopList({
  by,
  title,
  window: w,
  filter,
  metric,
  queue,
  isFilterError,
  enabled,
}: {
  by: string;
  title: string;
  window: FlowWindow;
  filter: string;
  metric: Metric;
  queue: <T>(run: () => Promise<T>) => Promise<T>;
  isFilterError: (e: Error | undefined) => boolean;
  enabled: boolean;
}) {
  const { api } = useServices();
  const top = useLoad(
    (signal) =>
      queue(() =>
        api.get<TopResult>('netflow', '/top', { start: w.start, end: w.end, filter, by, metric, limit: 10 }, signal),
      ).then((r) => r.result),
    [w.start, w.end, filter, by, metric],
    enabled,
  );
  // A bad filter is shown once, at the filter bar: the list shows nothing rather than the last answer.
  const badFilter = isFilterError(top.error);
  // On any error the list shows nothing rather than the last answer, which was another query's.
  const t = top.error ? undefined : top.data;
  const total = t ? t.total[metric] : 0;
  const items = t
    ? [
        ...t.rows.map((r) => ({ label: topRowLabel(by, r), value: r[metric] })),
        ...(t.other[metric] > 0 ? [{ label: 'other', value: t.other[metric] }] : []),
      ]
    : [];
  const headingId = `nf-top-${by}`;
  return (
    <section class="panel nf-top" aria-labelledby={headingId} aria-busy={top.loading}>
      <h3 id={headingId}>{title}</h3>
      {top.error && !isFilterError(top.error) && <ErrorMessage error={top.error} onRetry={top.reload} />}
      {t && items.length === 0 && <p class="hint">No flows in this window.</p>}
      {!t && !top.error && <p class="busy">Loading…</p>}
      {badFilter && <p class="hint">No answer: the filter is not valid.</p>}
      {items.length > 0 && (
        <ol class="nf-bars">
          {items.map((it) => (
            <li key={it.label} class={it.label === 'other' ? 'nf-other' : undefined}>
              <span class="nf-bar-label">{it.label}</span>
              <data class="nf-bar-value" value={String(it.value)}>
                {formatMetric(metric, it.value)}
                <span class="visually-hidden">, {total ? ((it.value * 100) / total).toFixed(1) : 0}%</span>
              </data>
              <span class="nf-bar" aria-hidden="true">
                <span style={{ width: `${total ? Math.max(0.5, (it.value * 100) / total) : 0}%` }} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function TopLists(props: {
  window: FlowWindow;
  filter: string;
  metric: Metric;
  queue: <T>(run: () => Promise<T>) => Promise<T>;
  isFilterError: (e: Error | undefined) => boolean;
  /** False until the chart has its first answer: the AS and country lists' first query can keep the server busy for seconds. */
  enabled: boolean;
}) {
  return (
    <div class="nf-tops">
      {TOP_LISTS.map((l) => (
        <TopList key={l.by} by={l.by} title={l.title} {...props} />
      ))}
    </div>
  );
}
