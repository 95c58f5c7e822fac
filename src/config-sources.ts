/**
 * The configuration's sources (file, `NETSVC_*` environment, command-line flags) read into the
 * one object the schema (config.ts) validates, and the validated result finished. No schema here:
 * a start that finds its validated configuration cached (config-cache.ts) loads no zod.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_FLOW_SOURCES } from '../collector/listen/flow-source-defaults.js';
import { ConfigError } from './config-error.js';

/** The stores of the default entity (the one a configuration without entities has). */
export const DEFAULT_ENTITY_STORES = { radius: 'sqlite:radius.sqlite', syslog: 'sqlite:syslog.sqlite' } as const;

/** Where the configuration comes from; every field optional. */
export interface ConfigSources {
  /** Explicit `--config FILE`; a missing file is an error. */
  file?: string;
  /** `--data-dir DIR`, which beats file and environment. */
  dataDir?: string;
  /** Environment to read overrides from; `loadConfig` defaults it to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Directory in which `netsvc.config.json` is looked for. */
  cwd?: string;
  /** Command-line overrides as dotted keys (`{'http.port': 9090}`), applied after the environment. */
  overrides?: Record<string, unknown>;
}

const ENV_PREFIX = 'NETSVC_';
/** Variables with the prefix that are not configuration keys: the config file path, and the test suites' switch. */
const NOT_CONFIG_KEYS = new Set(['NETSVC_CONFIG', 'NETSVC_REQUIRE_ALL']);

function envKeyToPath(name: string): string[] {
  return name
    .slice(ENV_PREFIX.length)
    .split('__')
    .map((segment) => segment.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));
}

function parseEnvValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Flow sources declared without entities of the configuration's own, which the default entity
 * then serves: when they only tune default sources (netflow, lentor), the other default sources
 * stay (NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC=0 alone keeps lentor, and netflow its
 * listen); when they name a source of their own, they are the set, and the default entity names
 * them (no default source is bound beside them).
 */
function withDeclaredSources(raw: Record<string, unknown>): void {
  const declared = raw.flowSources;
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) return;
  const names = Object.keys(declared);
  if (names.every((n) => Object.hasOwn(DEFAULT_FLOW_SOURCES, n))) {
    const missing = Object.entries(DEFAULT_FLOW_SOURCES).filter(([name]) => !Object.hasOwn(declared, name));
    raw.flowSources = { ...declared, ...Object.fromEntries(missing) };
  } else {
    raw.entities = { default: { flowSources: names, ...DEFAULT_ENTITY_STORES } };
  }
}

/** The object the schema validates: the file's, then the environment's, then the flags' values, later ones winning. */
export function configInput(sources: ConfigSources, env: NodeJS.ProcessEnv, cwd: string): Record<string, unknown> {
  const implicit = resolve(cwd, 'netsvc.config.json');
  const explicit = sources.file ?? env.NETSVC_CONFIG;
  const file = explicit ? resolve(cwd, explicit) : existsSync(implicit) ? implicit : undefined;
  const raw: Record<string, unknown> = file ? readConfigFile(file) : {};

  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined) continue;
    if (NOT_CONFIG_KEYS.has(name)) continue;
    setPath(raw, envKeyToPath(name), parseEnvValue(value));
  }
  for (const [key, value] of Object.entries(sources.overrides ?? {})) {
    if (value !== undefined) setPath(raw, key.split('.'), value);
  }
  if (sources.dataDir) raw.dataDir = sources.dataDir;
  if (raw.entities === undefined && raw.flowSources !== undefined) withDeclaredSources(raw);
  return raw;
}

/** The validated configuration as components get it: dataDir absolute (against `cwd`), and frozen. */
export function finishConfig<T extends { dataDir: string }>(data: T, cwd: string): Readonly<T> {
  data.dataDir = resolve(cwd, data.dataDir);
  return deepFreeze(data);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
