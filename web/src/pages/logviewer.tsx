/**
 * The logviewer (issue 21): search rsyslog's SystemEvents by host, tag, severity, message text and
 * time, page through the result, follow it live, export it as CSV. Everything through the public API
 * (GET /logviewer/search and /latest); the search sits in the URL (./logviewer/query.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { useServices } from '../context.js';
import { useLoad } from '../hooks.js';
import { setParams } from '../location.js';
import { Busy, ErrorMessage, Notice, Pager } from '../ui.js';
import { download, EXPORT_CAP, exportName, fetchAll, toCsv } from './logviewer/csv.js';
import {
  apiQuery,
  DEFAULT_PER_PAGE,
  FILTER_NAMES,
  queryOf,
  tailKey,
  type LogQuery,
  type SyslogRecord,
} from './logviewer/query.js';
import { RecordsTable } from './logviewer/records-table.js';
import { SearchForm, type Draft } from './logviewer/search-form.js';
import { TAIL_KEEP, useTail } from './logviewer/tail.js';
import './logviewer/logviewer.css';

function draftOf(q: LogQuery): Draft {
  return { ...q, perPage: q.perPage || DEFAULT_PER_PAGE };
}

const count = (n: number) => n.toLocaleString('en-US');

type ExportState =
  | { phase: 'idle' }
  | { phase: 'running'; rows: number }
  | { phase: 'done'; rows: number; capped: boolean }
  | { phase: 'failed'; error: Error };

export default function LogviewerPage({ params }: { path: string; params: URLSearchParams }) {
  const { api } = useServices();
  const search = params.toString();
  const q = queryOf(params);
  const [draft, setDraft] = useState<Draft>(() => draftOf(q));
  // Back/forward and links change the URL: the form follows what is shown.
  useEffect(() => setDraft(draftOf(queryOf(params))), [search]);

  const page = Math.max(1, Number(q.page) || 1);
  const perPage = q.perPage || DEFAULT_PER_PAGE;
  const result = useLoad(
    (signal) =>
      api.get<SyslogRecord[]>('logviewer', '/search', { ...apiQuery(q, true), page: q.page, perPage: q.perPage }, signal),
    [search],
    !q.live,
  );
  const tail = useTail(api, q, tailKey(q), q.live);
  const [exporting, setExporting] = useState<ExportState>({ phase: 'idle' });
  // An export's outcome belongs to the search it was made of.
  useEffect(() => setExporting((e) => (e.phase === 'running' ? e : { phase: 'idle' })), [search]);

  /** Puts the draft (changed by `patch`) in the URL: a new search from page 1. */
  const submit = (patch: Partial<Draft> = {}) => {
    const d = { ...draft, ...patch };
    setDraft(d);
    const next: Record<string, string | undefined> = {
      page: undefined,
      perPage: d.perPage === DEFAULT_PER_PAGE ? undefined : d.perPage,
    };
    for (const k of FILTER_NAMES) next[k] = d[k];
    const before = location.search;
    setParams(next);
    // The same search again: the user asks for fresh results.
    if (location.search === before && !q.live) result.reload();
  };

  const runExport = async () => {
    setExporting({ phase: 'running', rows: 0 });
    try {
      const { rows, capped } = await fetchAll(api, q, !q.live, (n) => setExporting({ phase: 'running', rows: n }));
      download(toCsv(rows), exportName());
      setExporting({ phase: 'done', rows: rows.length, capped });
    } catch (err) {
      setExporting({ phase: 'failed', error: err as ApiError });
    }
  };

  const rows = q.live ? tail.rows : (result.data?.result ?? []);
  const error = q.live ? tail.error : result.error;
  const loading = q.live ? tail.loading : result.loading;
  const filtered = FILTER_NAMES.some((k) => q[k] !== '' && (!q.live || (k !== 'startTime' && k !== 'endTime')));
  const empty = filtered ? 'No records match this search.' : 'No syslog records yet.';
  const first = (page - 1) * Number(perPage) + 1;

  return (
    <>
      <h1>Logs</h1>
      <SearchForm
        draft={draft}
        onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))}
        onSubmit={submit}
        onClear={() => {
          setDraft(draftOf(queryOf(new URLSearchParams())));
          setParams({ ...Object.fromEntries(FILTER_NAMES.map((k) => [k, undefined])), page: undefined });
        }}
        live={q.live}
        busy={loading && !q.live}
      />

      <div class="log-bar">
        <label class="switch">
          <input
            type="checkbox"
            checked={q.live}
            onChange={(e) => setParams({ live: e.currentTarget.checked ? '1' : undefined, page: undefined })}
          />
          Live tail
        </label>
        {/* Only what changes for the user is announced; the time of the last check is not. */}
        <span class="log-status">
          <span role="status" aria-live="polite">
            {q.live
              ? tail.hidden
                ? 'Paused while this tab is hidden.'
                : tail.updatedAt
                  ? `Live: ${count(tail.rows.length)} newest records${tail.lastBatch ? `, ${count(tail.lastBatch)} new at last update` : ''}.`
                  : 'Starting the live tail…'
              : result.data && rows.length > 0
                ? `Records ${count(first)}–${count(first + rows.length - 1)}${result.data.isLastPage ? '' : ', more on the next pages'}.`
                : ''}
          </span>
          {q.live && !tail.hidden && tail.updatedAt && <> Checked {tail.updatedAt.toLocaleTimeString()}.</>}
        </span>
        <Busy when={loading && !q.live} />
        <button type="button" class="export" disabled={exporting.phase === 'running'} onClick={() => void runExport()}>
          {exporting.phase === 'running' ? `Exporting… ${count(exporting.rows)} rows` : 'Export CSV'}
        </button>
      </div>
      {exporting.phase === 'done' && (
        <Notice>
          {exporting.capped
            ? `Exported the newest ${count(EXPORT_CAP)} records only: the search has more. Narrow it (time, host, severity) to export the rest.`
            : `Exported ${count(exporting.rows)} records.`}
        </Notice>
      )}
      {exporting.phase === 'failed' && <ErrorMessage error={`CSV export failed: ${exporting.error.message}`} />}
      {q.live && tail.gap && (
        <Notice>More records arrived between two updates than the tail reads at once; some in between are not shown.</Notice>
      )}

      <ErrorMessage error={error} onRetry={q.live ? undefined : result.reload} />
      {!(error && !q.live) && (
        <RecordsTable
          rows={rows}
          fresh={q.live ? tail.fresh : undefined}
          caption={q.live ? `Live tail, newest first, at most ${TAIL_KEEP} records` : 'Search result, newest first'}
          empty={loading ? 'Loading…' : empty}
          onFilter={(name, value) => submit({ [name]: value })}
        />
      )}
      {!q.live && result.data && !error && (page > 1 || result.data.isLastPage === false) && (
        <Pager
          page={page}
          isLastPage={result.data.isLastPage !== false}
          busy={loading}
          onPage={(p) => setParams({ page: p > 1 ? String(p) : undefined })}
        />
      )}
    </>
  );
}
