/**
 * What the hotspot reports share (sessions, login attempts, quota purchases): the search form, whose
 * fields are the API's own query parameters and live in the URL under the same names; the load of
 * one page of the report; and the results (the API's message on a refusal, the rows, paging).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Envelope, Query } from '../../api.js';
import { useServices } from '../../context.js';
import { useLoad, type Loaded } from '../../hooks.js';
import { setParams } from '../../location.js';
import { Busy, DataTable, ErrorMessage, Field, Pager, valueOf, type Column } from '../../ui.js';
import './report.css';

/** One search field: `name` is the API's query parameter and the URL's. */
export interface FilterSpec {
  name: string;
  label: string;
  hint?: string;
  placeholder?: string;
  /** A select of these values ('' = any). */
  options?: Array<{ value: string; label: string }>;
  /** Shown under "More filters" (opened when one of them is set). */
  more?: boolean;
}

/** The time range every report takes (api.md 4.3), applied to `what`, in the forms the API reads. */
export function timeFilters(what: string): FilterSpec[] {
  return [
    { name: 'startTime', label: 'From', placeholder: 'YYYY-MM-DD HH:mm', hint: `${what}, server time zone` },
    { name: 'endTime', label: 'To', placeholder: 'YYYY-MM-DD HH:mm', hint: 'Inclusive; a day or a time' },
  ];
}

const PER_PAGE = ['25', '50', '100', '250', '500'];
/** The API's own default page size (api.md 8). */
const DEFAULT_PER_PAGE = '100';

function FilterField({ spec, value, onInput }: { spec: FilterSpec; value: string; onInput: (v: string) => void }) {
  return (
    <Field label={spec.label} hint={spec.hint}>
      {(id, describedBy) =>
        spec.options ? (
          <select id={id} name={spec.name} aria-describedby={describedBy} value={value} onChange={(e) => onInput(valueOf(e))}>
            {spec.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        ) : (
          <input
            id={id}
            name={spec.name}
            aria-describedby={describedBy}
            placeholder={spec.placeholder}
            autocomplete="off"
            spellcheck={false}
            value={value}
            onInput={(e) => onInput(valueOf(e))}
          />
        )
      }
    </Field>
  );
}

/** The search form of a report; it follows the URL (back/forward, links) and writes it on Search. */
export function ReportFilters({ label, filters, params }: { label: string; filters: FilterSpec[]; params: URLSearchParams }) {
  const fromUrl = () => Object.fromEntries(filters.map((f) => [f.name, params.get(f.name) ?? '']));
  const [draft, setDraft] = useState<Record<string, string>>(fromUrl);
  // Taken again from the URL when it changes, in place: the focus stays where the user left it.
  const inUrl = filters.map((f) => params.get(f.name) ?? '').join('\u0000');
  useEffect(() => setDraft(fromUrl()), [inUrl]);
  const field = (f: FilterSpec) => (
    <FilterField key={f.name} spec={f} value={draft[f.name] ?? ''} onInput={(v) => setDraft((d) => ({ ...d, [f.name]: v }))} />
  );
  const main = filters.filter((f) => !f.more);
  const more = filters.filter((f) => f.more);
  return (
    <form
      class="panel report-filters"
      role="search"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        // A new search starts on its first page; the value is sent to the API as typed (trimmed).
        setParams({ ...Object.fromEntries(filters.map((f) => [f.name, draft[f.name]?.trim()])), page: null });
      }}
    >
      <div class="report-fields">{main.map(field)}</div>
      {more.length > 0 && (
        <details open={more.some((f) => params.get(f.name))}>
          <summary>More filters</summary>
          <div class="report-fields">{more.map(field)}</div>
        </details>
      )}
      <div class="report-form-actions">
        <button type="submit" class="primary">
          Search
        </button>
        <button
          type="button"
          onClick={() => setParams({ ...Object.fromEntries(filters.map((f) => [f.name, null])), page: null })}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

/** One page of a report from `GET /hotspot{path}` with the URL's values of `names`, page and perPage. */
export function useReport<T>(path: string, params: URLSearchParams, names: string[]): Loaded<Envelope<T[]>> {
  const { api } = useServices();
  const query: Query = {};
  for (const n of [...names, 'page', 'perPage']) {
    const v = params.get(n);
    if (v) query[n] = v;
  }
  const key = JSON.stringify(query);
  return useLoad((signal) => api.get<T[]>('hotspot', path, query, signal), [path, key]);
}

/** A figure with a second, quieter line under it (the readable form, the NAS under the hotspot, …). */
export function Stacked({ main, sub }: { main: ComponentChildren; sub?: ComponentChildren }) {
  return (
    <span class="stacked">
      <span>{main}</span>
      {sub !== undefined && sub !== '' && <small>{sub}</small>}
    </span>
  );
}

function rangeText(data: Envelope<unknown[]>): string {
  const n = data.result.length;
  if (n === 0) return data.page && data.page > 1 ? `Nothing on page ${data.page}.` : '';
  const first = ((data.page ?? 1) - 1) * (data.perPage ?? n) + 1;
  return `Rows ${first}–${first + n - 1}${data.isLastPage ? '' : ', more on the next page'}`;
}

/**
 * The results of a report: the API's message when it refuses the search (instead of rows that
 * belong to another search), else the rows with paging; the last rows stay while the next load.
 */
export function ReportResults<T>({
  label,
  loaded,
  params,
  columns,
  rowKey,
  empty,
  footer,
}: {
  label: string;
  loaded: Loaded<Envelope<T[]>>;
  params: URLSearchParams;
  columns: Column<T>[];
  rowKey: (row: T, i: number) => string | number;
  empty: string;
  footer?: (rows: T[]) => ComponentChildren;
}) {
  const { data, error, loading, reload } = loaded;
  const perPage = params.get('perPage') ?? DEFAULT_PER_PAGE;
  return (
    <section class="report" aria-label={label} aria-busy={loading}>
      <div class="report-bar">
        <span class="report-range" aria-live="polite">
          {!error && data ? rangeText(data as Envelope<unknown[]>) : ''}
        </span>
        <Busy when={loading} />
        <span class="report-tools">
          <label>
            Rows per page{' '}
            <select
              value={PER_PAGE.includes(perPage) ? perPage : ''}
              onChange={(e) => setParams({ perPage: valueOf(e) === DEFAULT_PER_PAGE ? null : valueOf(e), page: null })}
            >
              {!PER_PAGE.includes(perPage) && <option value="">{perPage}</option>}
              {PER_PAGE.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={reload} disabled={loading}>
            Refresh
          </button>
        </span>
      </div>
      <ErrorMessage error={error} onRetry={reload} />
      {!error && data && (
        <>
          <div class="report-cards">
            <DataTable columns={columns} rows={data.result} rowKey={rowKey} empty={empty} />
          </div>
          {footer && data.result.length > 0 && <p class="report-footer">{footer(data.result)}</p>}
          <Pager
            page={data.page ?? 1}
            isLastPage={data.isLastPage ?? true}
            busy={loading}
            onPage={(p) => setParams({ page: p === 1 ? null : String(p) })}
          />
        </>
      )}
    </section>
  );
}
