import type { FlowBatch } from '../../../common/flow-batch.js';
import type { ColumnName } from '../../../storage/capture/format.js';
import type { BlockStats } from '../../../storage/flow-query/filter-compile.js';

/** The true min/max of each numeric column over a batch's rows (addresses: unknown, as a block's directory answers). */
export function realStats(b: FlowBatch): BlockStats {
  return (column: ColumnName) => {
    if (column === 'srcAddr' || column === 'dstAddr' || column === 'exporter' || column === 'nextHop') return undefined;
    const a = b.cols[column];
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < b.length; i++) {
      min = Math.min(min, a[i]!);
      max = Math.max(max, a[i]!);
    }
    return { min, max };
  };
}
