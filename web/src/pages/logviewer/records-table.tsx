/**
 * Syslog records as a table: time, host, severity (a coloured badge that also says its name), tag and
 * the wrapping message. Host and tag are buttons that narrow the search to them. Below 640 px each row
 * becomes a card (logviewer.css), so a phone never scrolls the page sideways.
 */
import { severityName, type SyslogRecord } from './query.js';

export function SeverityBadge({ priority }: { priority: number | null }) {
  const name = severityName(priority);
  return (
    <span class={`sev sev-${priority ?? 'none'}`} title={priority === null ? undefined : `Severity ${priority}`}>
      {name}
    </span>
  );
}

export function RecordsTable({
  rows,
  fresh,
  caption,
  empty,
  onFilter,
}: {
  rows: readonly SyslogRecord[];
  fresh?: ReadonlySet<number>;
  caption: string;
  empty: string;
  onFilter: (name: 'host' | 'tag', value: string) => void;
}) {
  return (
    <div class="table-box log-box">
      <table class="log-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Host</th>
            <th scope="col">Severity</th>
            <th scope="col">Tag</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={5} class="empty">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((r) => (
              <tr key={r.ID} class={fresh?.has(r.ID) ? 'fresh' : undefined} data-id={r.ID}>
                <td class="time">
                  <time title={r.DeviceReportedTime ? `Reported by the device as ${r.DeviceReportedTime}` : undefined}>
                    {r.ReceivedAt ?? '—'}
                  </time>
                </td>
                <td class="host">
                  <button
                    type="button"
                    class="cell-filter"
                    title="Show only this host"
                    onClick={() => onFilter('host', r.FromHost)}
                  >
                    {r.FromHost}
                  </button>
                </td>
                <td class="severity">
                  <SeverityBadge priority={r.Priority} />
                </td>
                <td class="tag">
                  {r.SysLogTag && (
                    <button
                      type="button"
                      class="cell-filter"
                      title="Show only this program"
                      onClick={() => onFilter('tag', r.SysLogTag)}
                    >
                      {r.SysLogTag}
                    </button>
                  )}
                </td>
                <td class="message">{r.Message}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
