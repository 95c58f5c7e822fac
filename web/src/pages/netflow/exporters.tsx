/** The collector's counters per exporter, from `/netflow/exporters`. */
import { useServices } from '../../context.js';
import { formatBytes, formatCount } from '../../format.js';
import { useLoad } from '../../hooks.js';
import { DataTable, ErrorMessage, type Column } from '../../ui.js';

interface Exporter {
  address: string;
  datagrams: number;
  flows: number;
  bytes: number;
  malformed: number;
  unknown_version: number;
  data_without_template: number;
  pending_dropped: number;
  sequence_missing: number;
  templates_added: number;
  templates_updated: number;
  templates_withdrawn: number;
  sampling_interval: number | null;
}

interface ExportersResult {
  sources: Array<{ source: string; listen: string; datagrams_received: number; queue_drops: number; exporters: Exporter[] }>;
}

type Row = Exporter & { source: string };

const n = (k: keyof Exporter, label: string): Column<Row> => ({
  key: k,
  label,
  numeric: true,
  render: (r) => formatCount(Number(r[k] ?? 0)),
});

const COLUMNS: Column<Row>[] = [
  { key: 'source', label: 'Source' },
  { key: 'address', label: 'Exporter', render: (r) => <code>{r.address}</code> },
  n('datagrams', 'Datagrams'),
  n('flows', 'Flows'),
  { key: 'bytes', label: 'Bytes', numeric: true, render: (r) => formatBytes(r.bytes) },
  n('malformed', 'Malformed'),
  n('data_without_template', 'No template'),
  n('pending_dropped', 'Held, dropped'),
  n('sequence_missing', 'Sequence lost'),
  n('templates_added', 'Templates added'),
  n('templates_updated', 'updated'),
  n('templates_withdrawn', 'withdrawn'),
  {
    key: 'sampling',
    label: 'Sampling',
    numeric: true,
    render: (r) => (r.sampling_interval ? `1:${r.sampling_interval}` : 'from flows'),
  },
];

export function Exporters() {
  const { api } = useServices();
  const ex = useLoad((signal) => api.get<ExportersResult>('netflow', '/exporters', undefined, signal).then((r) => r.result), []);
  const sources = ex.data?.sources ?? [];
  const rows = sources.flatMap((s) => s.exporters.map((e) => ({ ...e, source: s.source })));
  return (
    <section class="panel" aria-labelledby="nf-exporters" aria-busy={ex.loading}>
      <div class="nf-head">
        <h2 id="nf-exporters">Exporters</h2>
        <button type="button" onClick={ex.reload} disabled={ex.loading}>
          Refresh
        </button>
      </div>
      <p class="hint">
        Since serve started.{' '}
        {sources
          .map(
            (s) =>
              `${s.source} (${s.listen}): ${formatCount(s.datagrams_received)} datagrams received, ${formatCount(s.queue_drops)} dropped by a full queue.`,
          )
          .join(' ')}
      </p>
      <ErrorMessage error={ex.error} onRetry={ex.reload} />
      <DataTable
        caption="Collector counters per exporter"
        columns={COLUMNS}
        rows={rows}
        rowKey={(r) => `${r.source}/${r.address}`}
        empty={ex.loading ? 'Loading…' : 'No exporter has sent anything yet.'}
      />
    </section>
  );
}
