/**
 * The access-attribute catalogue: which FreeRADIUS attributes netsvc lets
 * clients set, in which table, with which operator, and how the client's
 * unit maps to FreeRADIUS's (Kbps ↔ bps, MB ↔ octets). The definitions are
 * data (`attributes.json`); this module checks that file once and converts
 * values both ways.
 */
import { z } from 'zod';
import catalogueFile from './attributes.json' with { type: 'json' };
import type { AttributeWrite } from './radius-store.js';

const op = z.enum([':=', '+=', '=']);

const definitionSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9-]+$/),
    label: z.string().min(1),
    format: z.string().min(1),
    type: z.enum(['integer', 'string', 'url']),
    multiple: z.boolean(),
    table: z.enum(['check', 'reply']),
    operator: op,
    profileOperator: op,
    scale: z.number().int().positive().optional(),
    min: z.number().int().nonnegative().optional(),
    max: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    maxLength: z.number().int().positive().max(253).optional(),
    pattern: z.string().optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    // A check item with '=' would be a comparison, not an assignment (FreeRADIUS paircompare).
    if (d.table === 'check' && (d.operator === '=' || d.profileOperator === '=')) {
      ctx.addIssue({ code: 'custom', message: `${d.name}: check items need ':=' or '+='` });
    }
    if (d.type === 'integer' && (d.scale === undefined || d.min === undefined || d.max === undefined)) {
      ctx.addIssue({ code: 'custom', message: `${d.name}: integer attributes need scale, min and max` });
    }
  });

const fileSchema = z.object({ $comment: z.string().optional(), attributes: z.array(definitionSchema).min(1) }).strict();

/** One attribute definition from the catalogue file. */
export type AttributeDefinition = z.infer<typeof definitionSchema>;

/** What the API shows for a definition (api.md 2.4: `text`, `format`, `multiple`). */
export interface PublicDefinition {
  text: string;
  format: string;
  multiple: boolean;
}

/** A value the client sent that the attribute cannot take. */
export type Conversion = { ok: true; value: string } | { ok: false; error: string };

/** True when FreeRADIUS would treat the value as a quoted string (and unquote, or for backquotes expand, it). */
export function freeradiusWouldUnquote(value: string): boolean {
  const first = value[0];
  return value.length >= 2 && (first === '"' || first === "'" || first === '`') && value.endsWith(first);
}

// Control characters break FreeRADIUS's value parsing and the debug log; no attribute needs them.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The catalogue: look-up by name and unit conversion. */
export class AttributeCatalogue {
  private readonly byName: Map<string, AttributeDefinition>;

  constructor(definitions: AttributeDefinition[]) {
    this.byName = new Map(definitions.map((d) => [d.name.toLowerCase(), d]));
  }

  /** Every definition, in file order. */
  all(): AttributeDefinition[] {
    return [...this.byName.values()];
  }

  /** The definition of a name (case-insensitive, as FreeRADIUS's dictionary is). */
  get(name: string): AttributeDefinition | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** The map GET /user-access returns. */
  publicMap(): Record<string, PublicDefinition> {
    const out: Record<string, PublicDefinition> = {};
    for (const d of this.all()) out[d.name] = { text: d.label, format: d.format, multiple: d.multiple };
    return out;
  }

  /** Converts a client value (in `format`) to what FreeRADIUS stores. */
  toStored(def: AttributeDefinition, input: unknown): Conversion {
    if (def.type === 'integer') {
      const text = typeof input === 'number' ? String(input) : typeof input === 'string' ? input.trim() : undefined;
      if (text === undefined || !/^\d{1,16}(\.\d{1,6})?$/.test(text)) {
        return { ok: false, error: `${def.name}: value must be a non-negative number in ${def.format}` };
      }
      const stored = Math.round(Number(text) * def.scale!);
      if (def.scale === 1 && !Number.isInteger(Number(text))) {
        return { ok: false, error: `${def.name}: value must be a whole number of ${def.format}` };
      }
      if (!Number.isSafeInteger(stored) || stored < def.min! || stored > def.max!) {
        const lo = def.min! / def.scale!;
        const hi = Math.floor((def.max! / def.scale!) * 1000) / 1000;
        return { ok: false, error: `${def.name}: value must be between ${lo} and ${hi} ${def.format}` };
      }
      return { ok: true, value: String(stored) };
    }
    if (typeof input !== 'string' && typeof input !== 'number') {
      return { ok: false, error: `${def.name}: value must be a string` };
    }
    const value = String(input);
    const maxLength = def.maxLength ?? 253;
    if (value.length === 0 || value.length > maxLength) {
      return { ok: false, error: `${def.name}: value must be 1 to ${maxLength} characters` };
    }
    if (CONTROL.test(value)) return { ok: false, error: `${def.name}: value must not contain control characters` };
    if (freeradiusWouldUnquote(value)) {
      return { ok: false, error: `${def.name}: value must not be wrapped in quotes (FreeRADIUS would unquote or expand it)` };
    }
    if (def.type === 'url') {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return { ok: false, error: `${def.name}: value must be an http or https URL` };
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return { ok: false, error: `${def.name}: value must be an http or https URL` };
      }
    }
    if (def.pattern && !new RegExp(def.pattern).test(value)) {
      return { ok: false, error: `${def.name}: value '${value}' is not in the expected form` };
    }
    return { ok: true, value };
  }

  /** Converts a stored value back to the client's unit; unparsable numbers come back as stored. */
  fromStored(def: AttributeDefinition | undefined, stored: string): number | string {
    if (!def || def.type !== 'integer') return stored;
    if (!/^\d+$/.test(stored.trim())) return stored;
    return Math.round((Number(stored) / def.scale!) * 1000) / 1000;
  }

  /** The write for a user's own value of the attribute. */
  userWrite(def: AttributeDefinition, storedValue: string): AttributeWrite {
    return { attribute: def.name, table: def.table, op: def.operator, value: storedValue, multiple: def.multiple };
  }

  /** The write for a profile's value of the attribute. */
  profileWrite(def: AttributeDefinition, storedValue: string): AttributeWrite {
    return { attribute: def.name, table: def.table, op: def.profileOperator, value: storedValue, multiple: def.multiple };
  }
}

/** Checks catalogue data; throws naming the first problem. */
export function parseCatalogue(data: unknown): AttributeCatalogue {
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`attribute catalogue: ${issue.path.join('.')}: ${issue.message}`);
  }
  return new AttributeCatalogue(parsed.data.attributes);
}

let shipped: AttributeCatalogue | undefined;

/** The catalogue shipped in `storage/radius/attributes.json`. */
export function defaultCatalogue(): AttributeCatalogue {
  shipped ??= parseCatalogue(catalogueFile);
  return shipped;
}
