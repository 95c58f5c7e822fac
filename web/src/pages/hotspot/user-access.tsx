/**
 * A user's own access attributes, edited through the attribute catalogue (GET /hotspot/user-access):
 * the attribute is chosen from the catalogue, its value entered and shown in the catalogue's unit
 * (`format`: Seconds, Kbps, MB, …); the API converts to FreeRADIUS's unit (bit/s, octets).
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../../api.js';
import { useServices } from '../../context.js';
import { useLoad } from '../../hooks.js';
import { Confirm, DataTable, ErrorMessage, Field, Notice, valueOf, type Column } from '../../ui.js';

/** One catalogue entry (api.md 2.4). */
export interface Definition {
  text: string;
  format: string;
  multiple: boolean;
}

type Value = number | string;

interface UserAttribute {
  name: string;
  format: string;
  values: Value[];
}

interface UserAccess {
  id: string;
  username: string;
  attributes: Array<Record<string, { id: string; format: string; value: Value }>>;
}

/** Units whose values are numbers; Seconds and Number are whole (scale 1 in the catalogue). */
const NUMERIC = new Set(['Seconds', 'Number', 'Kbps', 'MB']);
const WHOLE = new Set(['Seconds', 'Number']);

/** The unit as printed next to a value; none for counts, text and addresses. */
export function unitOf(format: string): string {
  return format === 'Seconds' ? 's' : NUMERIC.has(format) && format !== 'Number' ? format : '';
}

/** The same amount in a bigger unit, when that reads better (7200 s → 2 h). */
export function readable(format: string, value: Value): string | undefined {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) return undefined;
  if (format === 'Seconds' && n >= 60) {
    const [d, h, m, s] = [Math.floor(n / 86400), Math.floor((n % 86400) / 3600), Math.floor((n % 3600) / 60), n % 60];
    return [d && `${d} d`, h && `${h} h`, m && `${m} min`, s && `${s} s`].filter(Boolean).join(' ');
  }
  if (format === 'Kbps' && n >= 1000) return `${+(n / 1000).toFixed(2)} Mbit/s`;
  if (format === 'MB' && n >= 1024) return `${+(n / 1024).toFixed(2)} GB`;
  return undefined;
}

/** What is wrong with a value for `format` (the API's own checks on the unit), or undefined. */
export function valueProblem(format: string, value: string): string | undefined {
  const v = value.trim();
  if (v === '') return 'Enter a value.';
  if (NUMERIC.has(format)) {
    if (!/^\d{1,16}(\.\d{1,6})?$/.test(v)) return `A non-negative number in ${format}.`;
    if (WHOLE.has(format) && !/^\d+$/.test(v)) return `A whole number of ${format}.`;
    return undefined;
  }
  if (/[\u0000-\u001f\u007f]/.test(v)) return 'Must not contain control characters.';
  if (/^(["'`]).*\1$/.test(v) && v.length >= 2) return 'Must not be wrapped in quotes (FreeRADIUS would unquote it).';
  return undefined;
}

/** An attach/detach refusal: the API's message and each item's reason from `details.errors`. */
function refusal(err: unknown): Error {
  if (err instanceof ApiError) {
    const errors = (err.body?.details as { errors?: string[] } | undefined)?.errors ?? [];
    if (errors.length) return new Error([err.message, ...errors].join('\n'));
  }
  return err as Error;
}

function group(access: UserAccess | undefined, catalogue: Record<string, Definition>): UserAttribute[] {
  const out = new Map<string, UserAttribute>();
  for (const entry of access?.attributes ?? []) {
    for (const [name, v] of Object.entries(entry)) {
      const a = out.get(name) ?? { name, format: catalogue[name]?.format ?? v.format, values: [] };
      a.values.push(v.value);
      out.set(name, a);
    }
  }
  return [...out.values()];
}

function ValueWithUnit({ format, value }: { format: string; value: Value }) {
  const unit = unitOf(format);
  const more = readable(format, value);
  return (
    <span class="attr-value">
      {String(value)}
      {unit && <span class="unit"> {unit}</span>}
      {more && <span class="hint"> ({more})</span>}
    </span>
  );
}

export function UserAccessAttributes({ userId, username }: { userId: number; username: string }) {
  const { api } = useServices();
  const catalogue = useLoad(
    async (signal) => (await api.get<Record<string, Definition>>('hotspot', '/user-access', undefined, signal)).result,
    [],
  );
  const access = useLoad(
    async (signal) => (await api.get<UserAccess>('hotspot', `/user-access/${userId}`, undefined, signal)).result,
    [userId],
  );
  const defs = catalogue.data ?? {};
  const names = Object.keys(defs);
  const rows = group(access.data, defs);

  const [attribute, setAttribute] = useState('');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string>();
  const [message, setMessage] = useState<string>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [removing, setRemoving] = useState<string>();
  const valueInput = useRef<HTMLInputElement>(null);

  const chosen = attribute && defs[attribute] ? attribute : (names[0] ?? '');
  const def = defs[chosen];
  const current = rows.find((r) => r.name === chosen);
  const unit = def ? unitOf(def.format) : '';

  const save = async (e: Event) => {
    e.preventDefault();
    if (!def) return;
    const p = valueProblem(def.format, value);
    setProblem(p);
    if (p) {
      valueInput.current?.focus();
      return;
    }
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      const res = await api.send<unknown>('hotspot', 'POST', `/user-access/${userId}/actions/attach-access`, {
        attribute: chosen,
        value: value.trim(),
      });
      const errors = (res.details as { errors?: string[] } | undefined)?.errors ?? [];
      if (errors.length) setError(new Error([res.message, ...errors].join('\n')));
      else setMessage(res.message);
      setValue('');
      access.reload();
    } catch (err) {
      setError(refusal(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (name: string) => {
    setRemoving(undefined);
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      const res = await api.send('hotspot', 'POST', `/user-access/${userId}/actions/detach-access`, { attribute: name });
      setMessage(res.message);
      access.reload();
    } catch (err) {
      setError(refusal(err));
    } finally {
      setBusy(false);
    }
  };

  const columns: Column<UserAttribute>[] = [
    {
      key: 'name',
      label: 'Attribute',
      render: (a) => (
        <>
          <span class="attr-name">{a.name}</span>
          {defs[a.name] && <span class="hint attr-text">{defs[a.name]!.text}</span>}
        </>
      ),
    },
    {
      key: 'value',
      label: 'Value',
      render: (a) => (
        <span class="attr-values">
          {a.values.map((v, i) => (
            <ValueWithUnit key={i} format={a.format} value={v} />
          ))}
        </span>
      ),
    },
    {
      key: 'actions',
      label: 'Actions',
      render: (a) => (
        <span class="row-actions">
          {defs[a.name] && !defs[a.name]!.multiple && (
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setAttribute(a.name);
                setValue(String(a.values[0] ?? ''));
                setProblem(undefined);
                valueInput.current?.focus();
              }}
            >
              Change<span class="visually-hidden"> {a.name}</span>
            </button>
          )}
          <button type="button" class="danger" disabled={busy} onClick={() => setRemoving(a.name)}>
            Remove<span class="visually-hidden"> {a.name}</span>
          </button>
        </span>
      ),
    },
  ];

  return (
    <section class="panel" aria-labelledby="user-access-title">
      <h3 id="user-access-title">Access attributes</h3>
      <p class="hint">The user's own values; they win over its profiles' values.</p>
      <ErrorMessage error={access.error} onRetry={access.reload} />
      <ErrorMessage error={catalogue.error} onRetry={catalogue.reload} />
      {access.data && (
        <DataTable
          caption={`Attributes of ${username}`}
          columns={columns}
          rows={rows}
          rowKey={(a) => a.name}
          empty="No attributes of its own."
        />
      )}
      {def && (
        <form class="row attr-form" noValidate onSubmit={(e) => void save(e)} aria-label="Set an attribute">
          <Field label="Attribute" hint={def.text}>
            {(id, d) => (
              <select
                id={id}
                name="attribute"
                aria-describedby={d}
                value={chosen}
                onChange={(e) => {
                  setAttribute(valueOf(e));
                  setProblem(undefined);
                }}
              >
                {names.map((n) => (
                  <option key={n} value={n}>
                    {n} ({defs[n]!.format})
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field
            label={`Value in ${def.format}`}
            error={problem}
            hint={
              current && def.multiple ? 'Adds one more value' : current ? `Now ${current.values.join(', ')} ${unit}` : undefined
            }
          >
            {(id, d) => (
              <span class="with-unit">
                <input
                  id={id}
                  ref={valueInput}
                  name="value"
                  inputMode={
                    NUMERIC.has(def.format)
                      ? WHOLE.has(def.format)
                        ? 'numeric'
                        : 'decimal'
                      : def.format === 'URL'
                        ? 'url'
                        : 'text'
                  }
                  type="text"
                  autocomplete="off"
                  aria-describedby={d}
                  aria-invalid={problem ? true : undefined}
                  value={value}
                  onInput={(e) => {
                    setValue(valueOf(e));
                    if (problem && !valueProblem(def.format, valueOf(e))) setProblem(undefined);
                  }}
                />
                {unit && (
                  <span class="unit" aria-hidden="true">
                    {unit}
                  </span>
                )}
              </span>
            )}
          </Field>
          <button type="submit" class="primary" disabled={busy}>
            {current && def.multiple ? 'Add value' : current ? 'Change' : 'Add'}
          </button>
        </form>
      )}
      {message && <Notice>{message}</Notice>}
      <ErrorMessage error={error} />
      <Confirm
        open={removing !== undefined}
        title="Remove attribute"
        message={
          <>
            Remove <strong>{removing}</strong> from <strong>{username}</strong>? Its profiles' value, if any, applies again.
          </>
        }
        confirmLabel="Remove"
        onConfirm={() => void remove(removing!)}
        onCancel={() => setRemoving(undefined)}
      />
    </section>
  );
}
