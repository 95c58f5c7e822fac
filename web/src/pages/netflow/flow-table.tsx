/** Matching flows from `/netflow/search`: cursor paging, order by time or bytes, names from `/netflow/resolve`. */
import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../../context.js';
import { formatBytes, formatCount } from '../../format.js';
import { useLoad } from '../../hooks.js';
import { setParams } from '../../location.js';
import { DataTable, ErrorMessage, Pager, type Column } from '../../ui.js';
import { protocolLabel, type FlowWindow } from './query.js';

interface Flow {
  ts: string;
  start: string;
  src_ip: string;
  dst_ip: string;
  src_port: number;
  dst_port: number;
  proto: number;
  packets: string;
  bytes: string;
  exporter: string;
}

interface SearchResult {
  flows: Flow[];
  total: number | null;
  as_of: string;
  next_cursor: string | null;
}

const PAGE = 50;
/** `/resolve` takes at most 20 addresses a call. */
const RESOLVE_BATCH = 20;

function useNames(addresses: string[]): { names: Record<string, string>; error: Error | undefined } {
  const { api } = useServices();
  const [names, setNames] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error>();
  const key = addresses.join(',');
  useEffect(() => {
    const ctl = new AbortController();
    const wanted = addresses.filter((a) => !(a in names));
    const batches: string[][] = [];
    for (let i = 0; i < wanted.length; i += RESOLVE_BATCH) batches.push(wanted.slice(i, i + RESOLVE_BATCH));
    for (const b of batches) {
      api.get<Record<string, string>>('netflow', '/resolve', { ips: b.join(',') }, ctl.signal).then(
        (r) => {
          setNames((n) => ({ ...n, ...r.result }));
          setError(undefined);
        },
        (err: Error) => err.name !== 'AbortError' && setError(err),
      );
    }
    return () => ctl.abort();
  }, [key]);
  return { names, error };
}

function Address({ ip, port, name }: { ip: string; port: number | undefined; name: string | undefined }) {
  return (
    <span class="nf-addr">
      <code>
        {ip.includes(':') && port !== undefined ? `[${ip}]` : ip}
        {port !== undefined ? `:${port}` : ''}
      </code>
      {name ? <small class="nf-name"> {name}</small> : null}
    </span>
  );
}

export function FlowTable({
  window: w,
  filter,
  order,
  queue,
  isFilterError,
  enabled,
}: {
  window: FlowWindow;
  filter: string;
  order: 'time' | 'bytes';
  queue: <T>(run: () => Promise<T>) => Promise<T>;
  isFilterError: (e: Error | undefined) => boolean;
  /** False until the chart has its answer (the page's first query). */
  enabled: boolean;
}) {
  const { api } = useServices();
  // Cursors of the pages visited so far (page 1 has none): Previous goes back along them.
  const [pages, setPages] = useState<Array<string | undefined>>([undefined]);
  const queryKey = `${w.start}|${w.end}|${filter}|${order}`;
  const [forKey, setForKey] = useState(queryKey);
  if (forKey !== queryKey) {
    setForKey(queryKey);
    setPages([undefined]);
  }
  const cursor = pages[pages.length - 1];
  const search = useLoad(
    (signal) =>
      queue(() =>
        api.get<SearchResult>(
          'netflow',
          '/search',
          { start: w.start, end: w.end, filter, order, limit: PAGE, cursor, count: pages.length === 1 },
          signal,
        ),
      ).then((r) => ({ ...r.result, key: queryKey })),
    [queryKey, cursor],
    enabled,
  );
  const [total, setTotal] = useState<{ key: string; n: number | null }>();
  const badFilter = isFilterError(search.error);
  // On any error the table shows nothing rather than the last answer, which was another query's.
  const r = search.error ? undefined : search.data;
  // The last answer stays on screen while the next loads: its count is only taken for its own query.
  if (r && r.key === queryKey && r.total !== null && pages.length === 1 && total?.key !== queryKey)
    setTotal({ key: queryKey, n: r.total });
  const shown = r?.flows ?? [];
  const addresses = [...new Set(shown.flatMap((f) => [f.src_ip, f.dst_ip]))];
  const { names, error: dnsError } = useNames(addresses);
  const ports = (f: Flow) => f.proto === 6 || f.proto === 17 || f.proto === 132;

  const columns: Column<Flow>[] = [
    // The API writes flow times in the service's time zone (the chart uses the browser's).
    { key: 'ts', label: 'Start (server time)', sortKey: 'time' },
    {
      key: 'src',
      label: 'Source',
      render: (f) => <Address ip={f.src_ip} port={ports(f) ? f.src_port : undefined} name={names[f.src_ip]} />,
    },
    {
      key: 'dst',
      label: 'Destination',
      render: (f) => <Address ip={f.dst_ip} port={ports(f) ? f.dst_port : undefined} name={names[f.dst_ip]} />,
    },
    { key: 'proto', label: 'Protocol', render: (f) => protocolLabel(f.proto) },
    { key: 'packets', label: 'Packets', numeric: true, render: (f) => formatCount(f.packets) },
    { key: 'bytes', label: 'Bytes', numeric: true, sortKey: 'bytes', render: (f) => formatBytes(Number(f.bytes)) },
    { key: 'exporter', label: 'Exporter' },
  ];
  const matches = total?.key === queryKey ? total.n : null;
  return (
    <section class="panel" aria-labelledby="nf-flows" aria-busy={search.loading}>
      <h2 id="nf-flows">Flows</h2>
      <p class="hint" aria-live="polite">
        <span>{matches !== null ? `${formatCount(matches)} flows match` : search.loading ? 'Counting…' : ''}</span>
        {r && <span> · received before {new Date(r.as_of).toLocaleString()}</span>}
      </p>
      {search.error && !isFilterError(search.error) && <ErrorMessage error={search.error} onRetry={search.reload} />}
      {dnsError && <ErrorMessage error={`Reverse DNS: ${dnsError.message}`} />}
      <DataTable
        caption={`Page ${pages.length}, ${order === 'time' ? 'newest first' : 'largest first'}`}
        columns={columns}
        rows={shown}
        rowKey={(_f, i) => i}
        sort={{ key: order, desc: true }}
        onSort={(k) => setParams({ order: k === 'bytes' ? 'bytes' : null }, true)}
        empty={badFilter ? 'No answer: the filter is not valid.' : search.loading ? 'Loading…' : 'No flows match.'}
      />
      <Pager
        page={pages.length}
        isLastPage={!r?.next_cursor}
        busy={search.loading}
        onPage={(p) => {
          if (p < pages.length) setPages(pages.slice(0, p));
          else if (r?.next_cursor) setPages([...pages, r.next_cursor]);
        }}
      />
    </section>
  );
}
