/** Running `netsvc` commands in process, with what they print kept for assertions. */
import { runCli } from '../../src/cli.js';
import { processContext, type CliContext } from '../../src/commands/context.js';

/** A CliContext whose stdout and stderr lines are kept instead of printed. */
export function captureCli(): CliContext & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { ...processContext(), out: (t) => stdout.push(t), err: (t) => stderr.push(t), stdout, stderr };
}

/** Runs `netsvc args…`; answers the exit code and the printed lines joined by newlines. */
export async function runCliCaptured(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const ctx = captureCli();
  const code = await runCli(args, ctx);
  return { code, out: ctx.stdout.join('\n'), err: ctx.stderr.join('\n') };
}
