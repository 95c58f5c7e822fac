/**
 * Which modules a Node process loads: every ES module, seen by a module loader hook, and every
 * CommonJS module (also those loaded through require, which the hook does not see), from the
 * require cache at exit; and Node's own modules, from its list of those it loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Runs `node <args>` with the hook; returns the URLs it loaded, in order, Node's own public
 * modules it loaded however it did (`fs`, `child_process`) but for the hook's own, with its exit status and stderr.
 */
export function loadedModules(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { urls: string[]; builtins: string[]; status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-loaded-'));
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function load(url, context, next) {\n' +
      '  appendFileSync(process.env.LOADED_MODULES_FILE, url + "\\n");\n' +
      '  return next(url, context);\n' +
      '}\n',
  );
  const hooks = pathToFileURL(join(dir, 'hooks.mjs')).href;
  writeFileSync(
    join(dir, 'register.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      "import { createRequire, register } from 'node:module';\n" +
      "import { pathToFileURL } from 'node:url';\n" +
      `register(${JSON.stringify(hooks)});\n` +
      // What the hook's own thread needs (worker_threads, net) is loaded by now: not counted.
      'const before = process.moduleLoadList.length;\n' +
      'const require = createRequire(import.meta.url);\n' +
      "process.on('exit', () => {\n" +
      "  const files = Object.keys(require.cache).filter((f) => f.startsWith('/'));\n" +
      "  appendFileSync(process.env.LOADED_MODULES_FILE, files.map((f) => pathToFileURL(f).href + '\\n').join(''));\n" +
      '  const builtins = process.moduleLoadList.slice(before).filter((m) => /^NativeModule (?!internal\\/)/.test(m)).map((m) => m.slice(13));\n' +
      "  appendFileSync(process.env.LOADED_BUILTINS_FILE, builtins.join('\\n'));\n" +
      '});\n',
  );
  const file = join(dir, 'loaded');
  const builtinsFile = join(dir, 'builtins');
  writeFileSync(file, '');
  writeFileSync(builtinsFile, '');
  const run = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), ...args], {
    env: { ...env, LOADED_MODULES_FILE: file, LOADED_BUILTINS_FILE: builtinsFile },
    encoding: 'utf8',
  });
  return {
    urls: readFileSync(file, 'utf8').split('\n').filter(Boolean),
    builtins: readFileSync(builtinsFile, 'utf8').split('\n').filter(Boolean),
    status: run.status,
    stderr: run.stderr,
  };
}

/** The npm packages among `urls` (`commander`, `@hono/node-server`). */
export function packagesOf(urls: readonly string[]): string[] {
  const names = new Set<string>();
  for (const url of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) names.add(m[1]!);
  }
  return [...names].sort();
}
