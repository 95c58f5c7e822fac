/**
 * `npm run bench -- <suite> [args…]`: runs one benchmark suite and prints its
 * table. Suites are modules `bench/<suite>.ts` exporting `run(args)`.
 */
const SUITES = [
  'collector',
  'storage',
  'flow-cache',
  'flow-filter',
  'flow-query',
  'geo',
  'logviewer',
  'hotspot',
  'serve',
  'hostile',
  'cli',
  'console',
] as const;

async function main(): Promise<void> {
  const [suite, ...args] = process.argv.slice(2);
  if (!suite || !(SUITES as readonly string[]).includes(suite)) {
    console.error(`usage: npm run bench -- <${SUITES.join('|')}> [options]`);
    process.exit(2);
  }
  const mod = (await import(`./${suite}.js`)) as { run(args: string[]): Promise<void> };
  await mod.run(args);
}

await main();
