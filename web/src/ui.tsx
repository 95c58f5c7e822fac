/** Small building blocks every page shares: messages, fields, tables, paging, dialogs. */
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { navigate } from './location.js';

/**
 * A link to a console page that navigates in the page (the URL holds the view), and still opens a
 * new tab or window on a middle, Ctrl, Cmd or Shift click, as any link does. `current`: the page shown.
 */
export function Link({ href, current, children }: { href: string; current?: boolean; children: ComponentChildren }) {
  return (
    <a
      href={href}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** An API or network error, with the API's own message; never a blank page. */
export function ErrorMessage({ error, onRetry }: { error: Error | string | undefined; onRetry?: () => void }) {
  if (!error) return null;
  const text = typeof error === 'string' ? error : error.message;
  // Asking again helps when the server was away, busy or failed; not when it refused the request itself.
  const status = typeof error === 'object' && 'status' in error ? (error as { status: number }).status : 0;
  const retry = status >= 400 && status < 500 && status !== 408 && status !== 429 ? undefined : onRetry;
  return (
    <div class="error" role="alert">
      <span>{text}</span>
      {retry && (
        <button type="button" class="link" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** A labelled control: the label is tied to the control for screen readers and clicks. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useId();
  const describedBy = error || hint ? `${id}-d` : undefined;
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children(id, describedBy)}
      {(error || hint) && (
        <small id={`${id}-d`} class={error ? 'field-error' : 'hint'}>
          {error ?? hint}
        </small>
      )}
    </div>
  );
}

export interface Column<T> {
  key: string;
  label: string;
  render?: (row: T) => ComponentChildren;
  /** Right-aligned (numbers). */
  numeric?: boolean;
  /** The column can be sorted by the server under this name. */
  sortKey?: string;
}

/** A table in a horizontally scrolling box (phone widths), with optional sortable headers. */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  sort,
  onSort,
  empty = 'Nothing to show.',
  caption,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T, i: number) => string | number;
  sort?: { key: string; desc: boolean };
  onSort?: (key: string) => void;
  empty?: string;
  caption?: string;
}) {
  return (
    <div class="table-box">
      <table>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort && c.sortKey === sort.key;
              return (
                <th
                  key={c.key}
                  scope="col"
                  class={c.numeric ? 'num' : undefined}
                  aria-sort={active ? (sort.desc ? 'descending' : 'ascending') : undefined}
                >
                  {c.sortKey && onSort ? (
                    <button type="button" class="sort" onClick={() => onSort(c.sortKey!)}>
                      {c.label}
                      {active ? (sort.desc ? ' ▼' : ' ▲') : ''}
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="empty">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row, i) => (
              <tr key={rowKey(row, i)}>
                {columns.map((c) => (
                  <td key={c.key} class={c.numeric ? 'num' : undefined} data-label={c.label}>
                    {c.render ? c.render(row) : String((row as Record<string, unknown>)[c.key] ?? '')}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** Previous/next paging for the API's page/perPage/isLastPage lists. */
export function Pager({
  page,
  isLastPage,
  onPage,
  busy,
}: {
  page: number;
  isLastPage: boolean;
  onPage: (p: number) => void;
  busy?: boolean;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1 || busy} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <span aria-live="polite">Page {page}</span>
      <button type="button" disabled={isLastPage || busy} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

/** A modal dialog (the browser's own <dialog>: focus trapped, Escape closes). */
export function Dialog({
  title,
  open,
  onClose,
  dismissable = true,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  /** False: Escape does not close it (the sign-in that a page waits on). */
  dismissable?: boolean;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-label={title}
      onCancel={(e) => {
        e.preventDefault();
        if (dismissable) onClose();
      }}
      onClose={() => {
        // Chromium closes a modal on a repeated Escape without a cancelable `cancel`: keep the
        // state in step (an undismissable one is shown again; another one tells its owner).
        if (!open) return;
        if (dismissable) onClose();
        else ref.current?.showModal();
      }}
    >
      {open && (
        <>
          <h2>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/** "Are you sure?" for destructive actions; the safe choice has the focus. */
export function Confirm({
  open,
  title,
  message,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Dialog title={title} open={open} onClose={onCancel}>
      <p>{message}</p>
      <div class="actions">
        <button type="button" autofocus onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

/** Shown while data loads; screen readers hear it once. */
export function Busy({ when }: { when: boolean }) {
  return when ? (
    <span class="busy" role="status" aria-live="polite">
      Loading…
    </span>
  ) : null;
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;

/** The value of an input/select event. */
export function valueOf(e: InputEvent): string {
  return e.currentTarget.value;
}
