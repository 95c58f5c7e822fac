/**
 * `npm run bench -- hostile costly-templates [--rounds N]`: 100 pairs of
 * 16 000-field templates with alternating layouts (each with its data
 * record) from one address while an honest softflowd stream sends 20 000
 * datagrams/s from another, against a spawned `netsvc serve`; the same
 * honest stream alone first, as the control. Every round is reported.
 */
import type { HostileRow } from './hostile.js';
import { honest, roundsRow } from './hostile-flow-state.js';
import { ATTACKER, costlyData, costlyTemplate, removeDataDir, spawnFlowServe, udpFrom } from './hostile-flow-lib.js';
import { log } from './lib.js';

export async function run(args: string[]): Promise<HostileRow[]> {
  const i = args.indexOf('--rounds');
  const rounds = i >= 0 ? Number(args[i + 1]) : 3;
  const control: number[] = [];
  const loss: number[] = [];
  const refused: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    log(`costly-templates round ${round}`);
    const s = await spawnFlowServe();
    try {
      const c = await honest(s, 20_000, 5000);
      control.push(c.sent - c.read);
      const a = await udpFrom(ATTACKER, s.udpPort);
      const attack = async (): Promise<void> => {
        for (let k = 0; k < 100; k++) {
          for (const layout of ['A', 'B'] as const) {
            await a.send(costlyTemplate(layout, 16_000, Math.floor(Date.now() / 1000)));
            await a.send(costlyData(16_000, Math.floor(Date.now() / 1000)));
          }
          await new Promise((ok) => setTimeout(ok, 20));
        }
      };
      const h = await honest(s, 20_000, 5000, attack);
      await a.close();
      loss.push(h.sent - h.read);
      refused.push(s.counter(await s.metrics(), 'templates_refused_total', ATTACKER));
      log(`  control lost ${c.sent - c.read}; under attack sent ${h.sent}, read ${h.read}, kernel drops ${h.kernelDrops}`);
    } finally {
      await s.stop();
      removeDataDir(s.dataDir);
    }
  }
  return [
    roundsRow('honest 20 000/s alone (control)', 'honest datagrams lost', control, String, '0', (v) => v === 0),
    roundsRow('100 pairs of 16 000-field templates', 'honest datagrams lost', loss, String, '0', (v) => v === 0),
    roundsRow('100 pairs of 16 000-field templates', 'templates refused', refused, String, '200', (v) => v === 200),
  ];
}
