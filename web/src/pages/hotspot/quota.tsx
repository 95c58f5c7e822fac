/**
 * Hotspot: the quota purchase report (GET /hotspot/quota-purchase-report), newest first. The API
 * only reads purchases; they are recorded on the server with `netsvc quota add` (docs/hotspot.md).
 */
import type { TabProps } from '../hotspot.js';
import { amountTotals } from './report-format.js';
import { ReportFilters, ReportResults, Stacked, timeFilters, useReport, type FilterSpec } from './report.js';

interface Purchase {
  id: number;
  transaction_time: string;
  username: string;
  plan_name: string;
  currency: string;
  amount: string;
  user_profiles: string;
  remarks: string;
  create_by: string;
  create_at: string;
}

const FILTERS: FilterSpec[] = [
  { name: 'username', label: 'Username', hint: 'Exact name' },
  { name: 'plan_name', label: 'Plan', hint: 'Exact plan name' },
  { name: 'remarks', label: 'Remarks contain' },
  ...timeFilters('Transaction time'),
  {
    name: 'transaction_time',
    label: 'Transaction day or time',
    placeholder: 'YYYY-MM-DD',
    hint: 'That day (YYYY-MM-DD) or that exact time (YYYY-MM-DD HH:mm:ss)',
    more: true,
  },
  { name: 'user_profiles', label: 'Profiles', hint: 'Exact list as shown, e.g. gold, night', more: true },
];

export function Quota({ params }: TabProps) {
  const loaded = useReport<Purchase>(
    '/quota-purchase-report',
    params,
    FILTERS.map((f) => f.name),
  );
  return (
    <>
      <h2>Quota purchases</h2>
      <ReportFilters label="Search quota purchases" filters={FILTERS} params={params} />
      <ReportResults
        label="Quota purchases"
        loaded={loaded}
        params={params}
        rowKey={(r) => r.id}
        empty="No purchases match. Purchases are recorded on the server with netsvc quota add."
        footer={(rows) => `Total on this page: ${amountTotals(rows)}`}
        columns={[
          { key: 'transaction_time', label: 'Time' },
          { key: 'username', label: 'Username' },
          { key: 'plan_name', label: 'Plan' },
          { key: 'amount', label: 'Amount', numeric: true, render: (r) => `${r.amount} ${r.currency}` },
          { key: 'user_profiles', label: 'Profiles', render: (r) => r.user_profiles || '—' },
          { key: 'remarks', label: 'Remarks', render: (r) => <span class="report-long">{r.remarks || '—'}</span> },
          { key: 'create_by', label: 'Recorded', render: (r) => <Stacked main={r.create_by} sub={r.create_at} /> },
        ]}
      />
    </>
  );
}
