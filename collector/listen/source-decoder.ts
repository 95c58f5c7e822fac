/** A flow source's decoder, set up from its settings: sampling overrides, value limits, and its templates kept on disk. */
import { join } from 'node:path';
import { createFlowDecoder, type FlowDecoder } from '../decode/decoder.js';
import type { TemplateCache } from '../decode/template-cache.js';
import { TemplatePersistence } from './template-persistence.js';
import type { Log } from '../../common/log.js';
import type { FlowSourceSettings } from './flow-source-config.js';
import { withFlowSourceDefaults } from './flow-source-defaults.js';
import type { FlowListenerOptions } from './listener-options.js';

/** A source's decoder with, when `templateDir` is set, its templates loaded from and saved to disk. */
export interface SourceDecoder {
  decoder: FlowDecoder;
  /** Saves the templates of exporters that changed, or with `all` of every one (no-op without a template dir); errors are thrown to the caller. */
  save(all?: boolean): void;
  /** True when a template was added, changed or removed since the last save (false without a template dir). */
  changed(): boolean;
}

/** Builds a source's decoder as the listeners do (sampling overrides, saved templates); unset settings take their defaults. */
export function openSourceDecoder(
  name: string,
  settings: FlowSourceSettings,
  opts: Pick<FlowListenerOptions, 'templateDir'>,
  now: () => number,
  logger?: Log,
): SourceDecoder {
  const cfg = withFlowSourceDefaults(settings);
  const ttlMs = cfg.templateTtlSec * 1000;
  const limits = cfg.templateLimits;
  const persistence = opts.templateDir
    ? new TemplatePersistence({
        dir: join(opts.templateDir, name),
        legacyPath: join(opts.templateDir, `${name}.msgpack`),
        now,
        ttlMs,
        limits,
      })
    : undefined;
  let templates: TemplateCache | undefined;
  if (persistence) {
    templates = persistence.load();
    if (templates.size > 0)
      logger?.info(
        { source: name, templates: templates.size, exporters: [...templates.allExporters()].length },
        'flow templates restored',
      );
    // A damaged file costs its exporter's templates until it resends them, never the start.
    for (const err of persistence.unreadable)
      logger?.warn({ source: name, err }, 'saved flow templates unreadable; that exporter starts without them');
  }
  const decoder = createFlowDecoder(
    {
      samplingOverride: { ...cfg.sampling },
      templateTtlMs: ttlMs,
      templateLimits: limits,
      pendingMaxAgeMs: cfg.pendingMaxAgeSec * 1000,
      pendingMaxSets: cfg.pendingMaxSets,
      pendingMaxBytes: cfg.pendingMaxBytes,
      pendingMaxSetsPerExporter: cfg.pendingMaxSetsPerExporter,
      limits: {
        minTimeMs: Date.parse(cfg.minFlowTime),
        maxFutureMs: cfg.maxFutureSec * 1000,
        maxSamplingInterval: cfg.maxSamplingInterval,
      },
    },
    templates,
  );
  let savedRevision = decoder.templates.revision;
  return {
    decoder,
    save(all = false) {
      if (!persistence) return;
      const revision = decoder.templates.revision;
      persistence.save(decoder.templates, all);
      savedRevision = revision;
    },
    changed() {
      return persistence !== undefined && decoder.templates.revision !== savedRevision;
    },
  };
}
