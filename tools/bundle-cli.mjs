// `npm run build` step after tsc: replaces dist/src/cli.js (the `netsvc` bin) with one ES module
// holding src/cli.ts, the command registration modules and commander, so that a start reads and
// links one file instead of ~40 (issue 19: each ES module costs its resolve, read and link, and
// commander came in through Node's CommonJS translation). Everything else stays where tsc put it
// and is imported from there, so a module the commands' work also imports is one instance:
// - every dynamic import (a command's `-run` module, the stores, the schema library) stays lazy;
// - a module of ours outside src/commands, context.ts, the `-run` modules and any module that
//   declares a class (errors tested with instanceof) are imported from dist/, not copied; but
//   src/extra-ca.ts, which only cli.ts imports and which keeps no state, is copied.
// Packages other than commander stay external. Run from the repository root.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve('.');
const srcDir = resolve(root, 'src');
const commandsDir = resolve(srcDir, 'commands');
const outfile = resolve(root, 'dist/src/cli.js');

/** Whether a source module of ours is copied into the bundle. */
function bundled(file) {
  if (file === resolve(srcDir, 'cli.ts') || file === resolve(srcDir, 'extra-ca.ts')) return true;
  if (dirname(file) !== commandsDir || file.endsWith('-run.ts') || file.endsWith('/context.ts')) return false;
  return !/^\s*(export\s+)?(abstract\s+)?class\s/m.test(readFileSync(file, 'utf8'));
}

/** The import path, from dist/src/cli.js, of the compiled module a source import names. */
function fromOutput(importer, path) {
  const target = relative(srcDir, resolve(dirname(importer), path));
  return target.startsWith('.') ? target : `./${target}`;
}

const frontOnly = {
  name: 'front-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.importer.includes('/node_modules/')) return undefined;
      const js = resolve(dirname(args.importer), args.path);
      const ts = js.replace(/\.js$/, '.ts');
      if (args.kind !== 'dynamic-import' && bundled(ts)) return { path: ts };
      return { path: fromOutput(args.importer, args.path), external: true };
    });
    // Node's own modules, as the bundle's static imports and commander's require calls name them:
    // - taken from process.getBuiltinModule, not imported: importing one into an ES module builds
    //   its ES module facade, which reads every export and so loads what Node keeps lazy
    //   (node:fs's streams and promises API, ~1 ms of a start);
    // - commander's node:child_process, which it uses only to run executable subcommands (netsvc
    //   has none), loaded when first used: loading it loads net, dgram and the streams (~3 ms).
    // The dynamic imports (the commands' work) are left as they are.
    b.onResolve({ filter: /^node:/ }, (args) => {
      if (
        args.kind === 'require-call' &&
        args.path === 'node:child_process' &&
        args.importer.includes('/node_modules/commander/')
      )
        return { path: args.path, namespace: 'node-on-first-use' };
      if (args.kind === 'import-statement' || args.kind === 'require-call') return { path: args.path, namespace: 'node-builtin' };
      return undefined;
    });
    b.onLoad({ filter: /^/, namespace: 'node-builtin' }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
    b.onLoad({ filter: /^/, namespace: 'node-on-first-use' }, (args) => ({
      contents:
        'let loaded;\n' +
        `module.exports = new Proxy({}, { get: (_, key) => (loaded ??= process.getBuiltinModule(${JSON.stringify(args.path)}))[key] });`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path === 'commander' || args.path.startsWith('node:')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

await build({
  entryPoints: [resolve(srcDir, 'cli.ts')],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [frontOnly],
});
chmodSync(outfile, 0o755);

// better-sqlite3's JavaScript in one CommonJS file (storage/sql/sqlite-driver.ts loads it): one
// module to resolve and read instead of fourteen. Made from the installed package at each build,
// so it is always the version whose addon is installed; the addon itself stays in the package.
await build({
  entryPoints: [createRequire(resolve(root, 'package.json')).resolve('better-sqlite3')],
  outfile: resolve(root, 'dist/vendor/better-sqlite3.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  // Only asked for when no addon file is given (sqlite-driver.ts gives one when it finds it).
  external: ['bindings'],
});
// The version copied: sqlite-driver.ts loads the copy only while the installed package is the same
// (an `npm update better-sqlite3` without a build must not pair old JavaScript with a new addon).
const sqlitePackage = createRequire(resolve(root, 'package.json'))('better-sqlite3/package.json');
writeFileSync(resolve(root, 'dist/vendor/better-sqlite3.json'), JSON.stringify({ version: sqlitePackage.version }) + '\n');
