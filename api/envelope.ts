/** Response envelopes of api.md 2.1, built in one place. */

/** `{status: true, result}` (netflow) or with a `message` (other areas). */
export function ok<T>(result: T, message?: string): { status: true; message?: string; result: T } {
  return message === undefined ? { status: true, result } : { status: true, message, result };
}

/** `{status: false, errorMessage}` plus any extra fields. */
export function fail(errorMessage: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { status: false, errorMessage, ...extra };
}

/** Wording clients of API 3.1.0 already see (decisions.md). */
export const MORE_PAGES = 'More records available. Use pagination to load next page.';
export const LAST_PAGE = "You've reached the last page of the results.";

/** The paged envelope of syslog and hotspot lists. `rows` may hold one extra row that signals a next page. */
export function paged<T>(
  rows: T[],
  page: number,
  perPage: number,
): {
  status: true;
  page: number;
  perPage: number;
  isLastPage: boolean;
  message: string;
  result: T[];
} {
  const isLastPage = rows.length <= perPage;
  return {
    status: true,
    page,
    perPage,
    isLastPage,
    message: isLastPage ? LAST_PAGE : MORE_PAGES,
    result: isLastPage ? rows : rows.slice(0, perPage),
  };
}
