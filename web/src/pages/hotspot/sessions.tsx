/**
 * Hotspot: accounting sessions (FreeRADIUS's radacct), newest first, in two views chosen by
 * `?view=`: who is online now (GET /hotspot/online-sessions, refreshed every 30 s) and the history
 * (GET /hotspot/historical-sessions). Figures as the API gives them, with a readable form beside.
 */
import { formatBytes, formatCount } from '../../format.js';
import { useInterval } from '../../hooks.js';
import { navigate } from '../../location.js';
import type { Column } from '../../ui.js';
import type { TabProps } from '../hotspot.js';
import { readableDuration, totaltimeSeconds } from './report-format.js';
import { ReportFilters, ReportResults, Stacked, timeFilters, useReport, type FilterSpec } from './report.js';

interface OnlineSession {
  radacctid: number;
  hotspot: string;
  username: string;
  nas: string;
  macaddress: string;
  calledstationid: string;
  ipaddress: string;
  starttime: string | null;
  traffic: string;
  name: string;
  totaltime: string;
}

interface HistoricalSession {
  radacctid: number;
  hotspot: string;
  username: string;
  macaddress: string;
  ipaddress: string;
  acctstarttime: string | null;
  acctstoptime: string | null;
  acctsessiontime: number;
  calledstationid: string;
  acctinputoctets: number;
  acctoutputoctets: number;
  acctterminatecause: string;
  nas: string;
}

const COMMON: FilterSpec[] = [
  { name: 'username', label: 'Username', hint: 'Exact name' },
  ...timeFilters('Session start'),
  { name: 'macaddress', label: 'Client MAC', placeholder: 'AA-BB-CC-DD-EE-FF', hint: 'Any notation', more: true },
  { name: 'hotspot', label: 'Hotspot', hint: 'NAS short name', more: true },
  { name: 'nas', label: 'NAS IP address', more: true },
  { name: 'calledstationid', label: 'Device MAC', hint: 'Called station', more: true },
];
const ONLINE_FILTERS = COMMON;
const HISTORY_FILTERS: FilterSpec[] = [...COMMON, { name: 'ipaddress', label: 'Client IP address', more: true }];

const VIEWS = [
  { id: 'online', label: 'Online now' },
  { id: 'history', label: 'History' },
] as const;

/** Both views' shared columns: who, from where, through which NAS. */
function placeColumns<
  T extends { ipaddress: string; macaddress: string; hotspot: string; nas: string; calledstationid: string },
>(): Column<T>[] {
  return [
    { key: 'client', label: 'Client', render: (r) => <Stacked main={r.ipaddress || '—'} sub={r.macaddress} /> },
    {
      key: 'nas',
      label: 'Hotspot',
      render: (r) => (
        <Stacked main={r.hotspot || r.nas || '—'} sub={[r.hotspot ? r.nas : '', r.calledstationid].filter(Boolean).join(' · ')} />
      ),
    },
  ];
}

function OnlineSessions({ params }: { params: URLSearchParams }) {
  const loaded = useReport<OnlineSession>(
    '/online-sessions',
    params,
    ONLINE_FILTERS.map((f) => f.name),
  );
  useInterval(loaded.reload, 30_000, !loaded.loading);
  return (
    <>
      <ReportFilters label="Search online sessions" filters={ONLINE_FILTERS} params={params} />
      <ReportResults
        label="Online sessions"
        loaded={loaded}
        params={params}
        rowKey={(r) => r.radacctid}
        empty="No one is online."
        columns={[
          { key: 'username', label: 'User', render: (r) => <Stacked main={r.username} sub={r.name} /> },
          { key: 'starttime', label: 'Started', render: (r) => r.starttime ?? '—' },
          {
            key: 'totaltime',
            label: 'Online for',
            numeric: true,
            render: (r) => {
              const s = totaltimeSeconds(r.totaltime);
              return <Stacked main={r.totaltime} sub={s === undefined ? undefined : readableDuration(s)} />;
            },
          },
          { key: 'traffic', label: 'Traffic', numeric: true },
          ...placeColumns<OnlineSession>(),
        ]}
      />
    </>
  );
}

function HistoricalSessions({ params }: { params: URLSearchParams }) {
  const loaded = useReport<HistoricalSession>(
    '/historical-sessions',
    params,
    HISTORY_FILTERS.map((f) => f.name),
  );
  const bytes = (n: number) => <Stacked main={formatBytes(n)} sub={`${formatCount(n)} B`} />;
  return (
    <>
      <ReportFilters label="Search session history" filters={HISTORY_FILTERS} params={params} />
      <ReportResults
        label="Session history"
        loaded={loaded}
        params={params}
        rowKey={(r) => r.radacctid}
        empty="No sessions match."
        columns={[
          { key: 'username', label: 'User' },
          { key: 'acctstarttime', label: 'Started', render: (r) => r.acctstarttime ?? '—' },
          { key: 'acctstoptime', label: 'Stopped', render: (r) => r.acctstoptime ?? <em>still open</em> },
          {
            key: 'acctsessiontime',
            label: 'Duration',
            numeric: true,
            render: (r) => <Stacked main={readableDuration(r.acctsessiontime)} sub={`${formatCount(r.acctsessiontime)} s`} />,
          },
          { key: 'acctinputoctets', label: 'Input', numeric: true, render: (r) => bytes(r.acctinputoctets) },
          { key: 'acctoutputoctets', label: 'Output', numeric: true, render: (r) => bytes(r.acctoutputoctets) },
          ...placeColumns<HistoricalSession>(),
          { key: 'acctterminatecause', label: 'Ended by', render: (r) => r.acctterminatecause || '—' },
        ]}
      />
    </>
  );
}

export function Sessions({ params }: TabProps) {
  const view = params.get('view') === 'history' ? 'history' : 'online';
  /** The other view keeps the search it can take, from its first page. */
  const switchTo = (id: string) => {
    const next: Record<string, string | null> = Object.fromEntries(params);
    next.view = id === 'online' ? null : id;
    next.page = null;
    if (id === 'online') next.ipaddress = null;
    navigate('/hotspot/sessions', next);
  };
  return (
    <>
      <h2>{view === 'online' ? 'Online sessions' : 'Session history'}</h2>
      <nav class="report-views" aria-label="Sessions">
        {VIEWS.map((v) => (
          <a
            key={v.id}
            href={v.id === 'online' ? '/hotspot/sessions' : `/hotspot/sessions?view=${v.id}`}
            aria-current={v.id === view ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              switchTo(v.id);
            }}
          >
            {v.label}
          </a>
        ))}
      </nav>
      {view === 'online' ? <OnlineSessions params={params} /> : <HistoricalSessions params={params} />}
    </>
  );
}
