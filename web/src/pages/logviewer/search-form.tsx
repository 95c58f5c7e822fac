/**
 * The search form. It edits a draft; Search puts the draft in the URL (one history entry), so the URL
 * always holds the search that is shown and the draft survives a sign-in the search waits for.
 */
import { Field, valueOf } from '../../ui.js';
import { PER_PAGE_CHOICES, SEVERITIES, type Filters } from './query.js';

export interface Draft extends Filters {
  perPage: string;
}

/** From-time choices that need no knowledge of the server's zone: an ISO instant in UTC. */
const RECENT: Array<{ label: string; minutes: number }> = [
  { label: '15 min', minutes: 15 },
  { label: '1 h', minutes: 60 },
  { label: '24 h', minutes: 24 * 60 },
];

function isoMinutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function SearchForm({
  draft,
  onChange,
  onSubmit,
  onClear,
  live,
  busy,
}: {
  draft: Draft;
  onChange: (patch: Partial<Draft>) => void;
  /** Search with the draft, changed by `patch` first. */
  onSubmit: (patch?: Partial<Draft>) => void;
  onClear: () => void;
  live: boolean;
  busy: boolean;
}) {
  const text = (name: 'host' | 'tag' | 'message', label: string, hint: string, placeholder?: string) => (
    <Field label={label} hint={hint}>
      {(id, describedBy) => (
        <input
          id={id}
          name={name}
          type="text"
          aria-describedby={describedBy}
          autocomplete="off"
          spellcheck={false}
          placeholder={placeholder}
          value={draft[name]}
          onInput={(e) => onChange({ [name]: valueOf(e) })}
        />
      )}
    </Field>
  );
  const time = (name: 'startTime' | 'endTime', label: string) => (
    <Field label={label} hint={live ? 'Not used by the live tail' : 'YYYY-MM-DD [HH:mm[:ss]] server time, or ISO 8601'}>
      {(id, describedBy) => (
        <input
          id={id}
          name={name}
          type="text"
          inputMode="numeric"
          aria-describedby={describedBy}
          autocomplete="off"
          spellcheck={false}
          placeholder="2025-07-05 10:00"
          disabled={live}
          value={draft[name]}
          onInput={(e) => onChange({ [name]: valueOf(e) })}
        />
      )}
    </Field>
  );
  return (
    <form
      class="panel log-search"
      role="search"
      aria-label="Search syslog"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <div class="log-fields">
        {text('host', 'Host', 'Exact, case-sensitive')}
        {text('tag', 'Tag (program)', 'sshd matches sshd[812]:')}
        <Field label="Severity">
          {(id) => (
            <select id={id} name="priority" value={draft.priority} onChange={(e) => onChange({ priority: valueOf(e) })}>
              <option value="">Any</option>
              {SEVERITIES.map((s, i) => (
                <option key={s} value={String(i)}>
                  {i} {s}
                </option>
              ))}
            </select>
          )}
        </Field>
        {text('message', 'Message contains', 'Any letter case')}
        {time('startTime', 'From')}
        {time('endTime', 'To')}
      </div>
      <div class="log-actions">
        <button type="submit" class="primary" disabled={busy}>
          Search
        </button>
        <button type="button" onClick={onClear}>
          Clear
        </button>
        {!live && (
          <span class="recent" role="group" aria-label="Search the last">
            <span class="hint">Last</span>
            {RECENT.map((r) => (
              <button
                key={r.label}
                type="button"
                class="link"
                onClick={() => onSubmit({ startTime: isoMinutesAgo(r.minutes), endTime: '' })}
              >
                {r.label}
              </button>
            ))}
          </span>
        )}
        <Field label="Rows per page">
          {(id) => (
            <select id={id} name="perPage" value={draft.perPage} onChange={(e) => onChange({ perPage: valueOf(e) })}>
              {PER_PAGE_CHOICES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
    </form>
  );
}
