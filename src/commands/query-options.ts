/** Mistakes in the query options of `dump` and `top` (`--filter`, `--by`), as usage errors: nfdump syntax errors with a caret under their column. */
import { FilterCompileError } from '../../storage/flow-query/filter-compile.js';
import { filterErrorCaret, FilterSyntaxError } from '../../storage/flow-query/filter-parse.js';
import { TooManyGroupsError } from '../../storage/flow-query/top-n.js';
import { UsageError } from './context.js';

/** The usage error a filter or grouping mistake becomes (exit 2), or `err` itself when it is something else. */
export function queryUsageError(err: unknown): unknown {
  // The message once, then where: the expression with a caret under the column.
  if (err instanceof FilterSyntaxError) return new UsageError(`--filter: ${err.message}\n${filterErrorCaret(err)}`);
  if (err instanceof FilterCompileError) return new UsageError(`--filter: ${err.message}`);
  if (err instanceof TooManyGroupsError) return new UsageError(`--by: ${err.message}`);
  return err;
}
