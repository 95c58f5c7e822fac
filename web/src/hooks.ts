/** Loading API data into a page: one hook that keeps the last answer, the error and a reload. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` whenever `deps` change (aborting the previous run) and on `reload()`. The last good
 * answer stays on screen while the next one loads, so a page never goes blank; `enabled` false skips.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], enabled = true): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    if (!enabled) return;
    const ctl = new AbortController();
    setLoading(true);
    loadRef.current(ctl.signal).then(
      (d) => {
        if (ctl.signal.aborted) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (err: Error) => {
        if (ctl.signal.aborted || err.name === 'AbortError') return;
        setError(err);
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [...deps, tick, enabled]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Calls `fn` every `ms` while `enabled`, for live views (the log tail). */
export function useInterval(fn: () => void, ms: number, enabled: boolean): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (!enabled) return;
    const id = setInterval(() => ref.current(), ms);
    return () => clearInterval(id);
  }, [ms, enabled]);
}
