/**
 * Runs a peer's commands (nfdump) for a benchmark, in a small process of its own, and times each
 * one there. A benchmark that spawned them itself would fork its own large process before each:
 * Linux then marks every page of it copy-on-write, and the next measured query pays a page fault
 * for each page it writes (seen: 2.5× the page faults and twice the time of a src_ip top-N).
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Ask {
  id: number;
  cmd: string;
  args: string[];
}
interface Answer {
  id: number;
  ms: number;
  status: number | null;
  stderr: string;
}

/** One command's run: wall time (ms) measured in the runner, exit status and stderr. */
export interface PeerRun {
  ms: number;
  status: number | null;
  stderr: string;
}

/** The runner process; start it before the benchmark grows, close it at the end. */
export class PeerRunner {
  private readonly child: ChildProcess;
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();

  constructor() {
    // Without the benchmark's Node flags (a --cpu-prof run profiles the benchmark, not the runner).
    this.child = fork(fileURLToPath(import.meta.url), ['--peer-runner'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    this.child.on('message', (a: Answer) => {
      this.waiting.get(a.id)?.resolve(a);
      this.waiting.delete(a.id);
    });
    // A runner that dies fails what waits on it (instead of leaving the benchmark waiting).
    this.child.on('exit', (code, signal) => {
      for (const w of this.waiting.values()) w.reject(new Error(`peer runner ended (${signal ?? code})`));
      this.waiting.clear();
    });
  }

  run(cmd: string, args: string[]): Promise<PeerRun> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, cmd, args } satisfies Ask, (err) => {
        if (!err) return;
        this.waiting.delete(id);
        reject(err);
      });
    });
  }

  close(): void {
    this.child.kill();
  }
}

if (process.argv.includes('--peer-runner')) {
  process.on('message', (m: Ask) => {
    const t0 = performance.now();
    const res = spawnSync(m.cmd, m.args, { encoding: 'utf8', maxBuffer: 1 << 26 });
    const ms = performance.now() - t0;
    process.send!({
      id: m.id,
      ms,
      status: res.error ? null : res.status,
      stderr: res.stderr ?? String(res.error),
    } satisfies Answer);
  });
}
