/**
 * The console's frame: sign-in, the area navigation and the current page. Pages are loaded on first
 * visit (their own chunk each), so the netflow charts cost the hotspot page nothing.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Services, type ConsoleServices } from './context.js';
import { navigate, usePlace } from './location.js';
import type { Area } from './session.js';
import { SignInForm } from './sign-in.js';
import { Dialog, ErrorMessage, Link } from './ui.js';

type Page = ComponentType<{ path: string; params: URLSearchParams }>;

const PAGES: Record<Area, { label: string; load: () => Promise<{ default: Page }> }> = {
  netflow: { label: 'Traffic', load: () => import('./pages/netflow.js') },
  logviewer: { label: 'Logs', load: () => import('./pages/logviewer.js') },
  hotspot: { label: 'Hotspot', load: () => import('./pages/hotspot.js') },
};

function areaOf(path: string): Area | undefined {
  const first = path.split('/')[1];
  return first === 'netflow' || first === 'logviewer' || first === 'hotspot' ? first : undefined;
}

function useSessionChanges(services: ConsoleServices): void {
  const [, setTick] = useState(0);
  useEffect(() => services.session.subscribe(() => setTick((t) => t + 1)), [services]);
}

function LazyPage({ area, path, params }: { area: Area; path: string; params: URLSearchParams }) {
  const [loaded, setLoaded] = useState<{ area: Area; page: Page }>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let live = true;
    setError(undefined);
    PAGES[area].load().then(
      (m) => live && setLoaded({ area, page: m.default }),
      (err: Error) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [area]);
  if (error) return <ErrorMessage error={`The ${PAGES[area].label} page did not load: ${error.message}`} />;
  if (!loaded || loaded.area !== area) return <p class="busy">Loading…</p>;
  const P = loaded.page;
  return <P path={path} params={params} />;
}

export function App({ services }: { services: ConsoleServices }) {
  useSessionChanges(services);
  const { session } = services;
  const { path, params } = usePlace();
  if (!session.signedIn) {
    return (
      <main id="main" class="sign-in-page">
        <SignInForm session={session} />
      </main>
    );
  }
  const areas = session.areas;
  const area = areaOf(path);
  const first = areas[0];
  if ((!area || !areas.includes(area)) && first) {
    // `/` or an area this user lacks: the first area they have.
    queueMicrotask(() => navigate(`/${first}`, {}, true));
  }
  return (
    <Services.Provider value={services}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">netsvc</span>
        <nav aria-label="Areas">
          {areas.map((a) => (
            <Link key={a} href={`/${a}`} current={a === area}>
              {PAGES[a].label}
            </Link>
          ))}
        </nav>
        <span class="who">{session.apiId}</span>
        <button type="button" class="link" onClick={() => session.signOut()}>
          Sign out
        </button>
      </header>
      <main id="main">{area && areas.includes(area) && <LazyPage area={area} path={path} params={params} />}</main>
      <Dialog title="Sign in again" open={session.needsSignIn} onClose={() => undefined} dismissable={false}>
        <SignInForm
          session={session}
          reason="Your sign-in has expired or was revoked. Sign in again to carry on where you were."
        />
      </Dialog>
    </Services.Provider>
  );
}
