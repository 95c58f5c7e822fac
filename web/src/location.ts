/**
 * The console's state lives in the URL: the path names the page (`/netflow`, `/hotspot/users`) and the
 * query holds what the page shows (window, filter, dimension, search terms), so that a view can be
 * bookmarked, shared and restored with the browser's back button.
 */
import { useEffect, useState } from 'preact/hooks';

const CHANGE = 'netsvc:navigate';

export interface Place {
  path: string;
  params: URLSearchParams;
}

function here(): Place {
  return { path: location.pathname, params: new URLSearchParams(location.search) };
}

/** Goes to `path` with `params` (unset, null and '' values left out); `replace` keeps one history entry. */
export function navigate(path: string, params: Record<string, string | undefined | null> = {}, replace = false): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  const url = s ? `${path}?${s}` : path;
  if (url === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new Event(CHANGE));
}

/** Changes some query parameters of the current page, keeping the others. */
export function setParams(patch: Record<string, string | undefined | null>, replace = false): void {
  const params: Record<string, string | undefined | null> = Object.fromEntries(new URLSearchParams(location.search));
  navigate(location.pathname, { ...params, ...patch }, replace);
}

/** The current place, re-rendered on every navigation (links, back/forward). */
export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = () => setPlace(here());
    addEventListener('popstate', update);
    addEventListener(CHANGE, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(CHANGE, update);
    };
  }, []);
  return place;
}
