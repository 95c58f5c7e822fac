/**
 * `npm run bench -- hostile [part…]`: sends the attacks of issue 16 over
 * loopback at full size and prints what the service did, one table row per
 * measure, with the target beside it. Each part is a module
 * `bench/hostile-<part>.ts` exporting `run(args): Promise<HostileRow[]>`;
 * the parts run one after another (never together: each measures CPU).
 */
import { log } from './lib.js';

/** One measured figure of an attack. */
export interface HostileRow {
  attack: string;
  measure: string;
  value: string;
  target: string;
  ok: boolean;
}

const PARTS = [
  'flow-state',
  'costly-templates',
  'syslog-tcp',
  'syslog-lock',
  'syslog-udp',
  'scrypt',
  'values',
  'sql-errors',
] as const;

export async function run(args: string[]): Promise<void> {
  // Part names pick parts; every other argument (`--rounds 5`) is an option of the parts.
  const wanted = args.filter((a) => (PARTS as readonly string[]).includes(a));
  const parts = wanted.length > 0 ? PARTS.filter((p) => wanted.includes(p)) : PARTS;
  const rows: HostileRow[] = [];
  for (const part of parts) {
    log(`hostile: ${part}`);
    let mod: { run(args: string[]): Promise<HostileRow[]> };
    try {
      mod = (await import(`./hostile-${part}.js`)) as typeof mod;
    } catch (err) {
      rows.push({
        attack: part,
        measure: 'not measured',
        value: String((err as Error).message).slice(0, 60),
        target: '',
        ok: false,
      });
      continue;
    }
    rows.push(...(await mod.run(args)));
  }
  const head = ['attack', 'measure', 'value', 'target', 'ok'];
  const table = [head, ...rows.map((r) => [r.attack, r.measure, r.value, r.target, r.ok ? 'yes' : 'NO'])];
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table)
    console.log(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  if (rows.some((r) => !r.ok)) process.exitCode = 1;
}
