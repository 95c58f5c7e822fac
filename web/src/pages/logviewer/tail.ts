/**
 * The live tail: the newest records matching the filters, then a poll every TAIL_INTERVAL_MS for what
 * came after the newest one shown, prepended. It waits while the tab is hidden and never runs two polls
 * at once (a poll may be waiting for the user to sign in again).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../../api.js';
import { apiQuery, isNewer, type Filters, type SyslogRecord } from './query.js';

export const TAIL_INTERVAL_MS = 1500;
/** Rows kept on screen; older ones fall off the bottom. */
export const TAIL_KEEP = 500;
/** One poll reads at most this many pages of TAIL_PAGE rows; a burst beyond that leaves a gap (said on screen). */
const TAIL_PAGES = 5;
const TAIL_PAGE = 200;

export interface Tail {
  rows: SyslogRecord[];
  /** IDs that arrived after the first load (highlighted). */
  fresh: ReadonlySet<number>;
  /** How many arrived with the last poll that brought any. */
  lastBatch: number;
  /** A burst outran one poll: records between two polls may be missing. */
  gap: boolean;
  error: Error | undefined;
  loading: boolean;
  hidden: boolean;
  /** Browser clock of the last good poll. */
  updatedAt: Date | undefined;
}

function useHidden(): boolean {
  const [hidden, setHidden] = useState(() => document.hidden);
  useEffect(() => {
    const update = () => setHidden(document.hidden);
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return hidden;
}

/** Follows `filters` while `enabled`; restarts from the newest page when `key` changes. */
export function useTail(api: Api, filters: Filters, key: string, enabled: boolean): Tail {
  const hidden = useHidden();
  const [state, setState] = useState<Omit<Tail, 'hidden'>>({
    rows: [],
    fresh: new Set(),
    lastBatch: 0,
    gap: false,
    error: undefined,
    loading: false,
    updatedAt: undefined,
  });
  const filtersRef = useRef(filters);
  filtersRef.current = filters;

  useEffect(() => {
    if (!enabled) return;
    const ctl = new AbortController();
    let rows: SyslogRecord[] = [];
    let fresh = new Set<number>();
    let started = false;
    let busy = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const q = () => apiQuery(filtersRef.current, false);

    const first = async () => {
      const env = await api.get<SyslogRecord[]>('logviewer', '/latest', { ...q(), perPage: TAIL_PAGE }, ctl.signal);
      rows = env.result;
      started = true;
      setState({ rows, fresh, lastBatch: 0, gap: false, error: undefined, loading: false, updatedAt: new Date() });
    };

    const next = async () => {
      const newest = rows[0];
      const seen = new Set(rows.map((r) => r.ID));
      const arrived: SyslogRecord[] = [];
      let gap = false;
      pages: for (let page = 1; page <= TAIL_PAGES; page++) {
        const env = await api.get<SyslogRecord[]>('logviewer', '/latest', { ...q(), page, perPage: TAIL_PAGE }, ctl.signal);
        for (const r of env.result) {
          if (newest && !isNewer(r, newest)) break pages;
          if (seen.has(r.ID)) continue;
          // Offset pages shift while records arrive: the next page may repeat one taken here.
          seen.add(r.ID);
          arrived.push(r);
        }
        if (env.isLastPage !== false) break;
        if (page === TAIL_PAGES) gap = true;
      }
      if (arrived.length > 0) {
        rows = [...arrived, ...rows].slice(0, TAIL_KEEP);
        const kept = new Set(rows.map((r) => r.ID));
        fresh = new Set([...arrived.map((r) => r.ID), ...[...fresh].filter((id) => kept.has(id))]);
      }
      setState((s) => ({
        rows,
        fresh,
        lastBatch: arrived.length > 0 ? arrived.length : s.lastBatch,
        gap: gap || s.gap,
        error: undefined,
        loading: false,
        updatedAt: new Date(),
      }));
    };

    const tick = async () => {
      if (busy || ctl.signal.aborted) return;
      busy = true;
      try {
        if (!document.hidden) await (started ? next() : first());
      } catch (err) {
        if (!ctl.signal.aborted && (err as Error).name !== 'AbortError')
          setState((s) => ({ ...s, error: err as Error, loading: false }));
      } finally {
        busy = false;
        if (!ctl.signal.aborted) timer = setTimeout(() => void tick(), TAIL_INTERVAL_MS);
      }
    };

    setState({ rows: [], fresh, lastBatch: 0, gap: false, error: undefined, loading: true, updatedAt: undefined });
    void tick();
    const onVisible = () => {
      if (!document.hidden && !busy) {
        clearTimeout(timer);
        void tick();
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      ctl.abort();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [api, key, enabled]);

  return { ...state, hidden };
}
