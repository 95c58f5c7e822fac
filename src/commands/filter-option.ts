/** The `--filter` option of `dump` and `top`: nfdump's syntax, a mistake shown with a caret under its column. */
import { FilterCompileError } from '../../storage/flow-query/filter-compile.js';
import { FilterSyntaxError, renderFilterError } from '../../storage/flow-query/filter-parse.js';
import { TooManyGroupsError } from '../../storage/flow-query/top-n.js';
import { UsageError } from './context.js';

/** The usage error a filter mistake becomes (exit 2), or `err` itself when it is something else. */
export function filterUsageError(err: unknown): unknown {
  if (err instanceof FilterSyntaxError) return new UsageError(`--filter: ${err.message}\n${renderFilterError(err)}`);
  if (err instanceof FilterCompileError) return new UsageError(`--filter: ${err.message}`);
  if (err instanceof TooManyGroupsError) return new UsageError(`--by: ${err.message}`);
  return err;
}
