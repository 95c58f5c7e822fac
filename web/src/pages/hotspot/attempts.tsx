/** Hotspot: login attempts (GET /hotspot/login-attempts, FreeRADIUS's radpostauth), newest first. */
import type { TabProps } from '../hotspot.js';
import { ReportFilters, ReportResults, timeFilters, useReport, type FilterSpec } from './report.js';

interface Attempt {
  id: number;
  username: string;
  pass: string;
  reply: string;
  authdate: string;
}

const FILTERS: FilterSpec[] = [
  { name: 'username', label: 'Username', hint: 'Exact name' },
  {
    name: 'reply',
    label: 'Reply',
    options: [
      { value: '', label: 'Any' },
      { value: 'Access-Accept', label: 'Access-Accept' },
      { value: 'Access-Reject', label: 'Access-Reject' },
    ],
  },
  ...timeFilters('Attempt time'),
];

/** The reply in words and colour (colour is never the only sign). */
export function ReplyBadge({ reply }: { reply: string }) {
  const kind = reply === 'Access-Accept' ? 'accept' : reply === 'Access-Reject' ? 'reject' : undefined;
  return (
    <span class={kind ? `reply reply-${kind}` : 'reply'}>
      {kind && <span aria-hidden="true">{kind === 'accept' ? '✓ ' : '✗ '}</span>}
      {reply}
    </span>
  );
}

export function Attempts({ params }: TabProps) {
  const loaded = useReport<Attempt>(
    '/login-attempts',
    params,
    FILTERS.map((f) => f.name),
  );
  return (
    <>
      <h2>Login attempts</h2>
      <ReportFilters label="Search login attempts" filters={FILTERS} params={params} />
      <ReportResults
        label="Login attempts"
        loaded={loaded}
        params={params}
        rowKey={(r) => r.id}
        empty="No login attempts match."
        columns={[
          { key: 'authdate', label: 'Time' },
          { key: 'username', label: 'Username' },
          { key: 'reply', label: 'Reply', render: (r) => <ReplyBadge reply={r.reply} /> },
        ]}
      />
    </>
  );
}
