/**
 * Builds the GeoLookup the configuration asks for: the shipped tables (ip-location-db.ts), each
 * kind replaced by the user's MaxMind DB when one is named (mmdb.ts); nothing is read until the
 * first lookup of a kind (or `loadAll()`).
 */
import { resolve } from 'node:path';
import type { GeoConfig } from './geo-config.js';
import type { GeoLookup } from './geo-lookup.js';
import { loadShippedTables, type GeoKind, type GeoTables } from './ip-location-db.js';
import { loadMmdbTables } from './mmdb.js';
import { EMPTY_V4, EMPTY_V6 } from './range-table.js';
import { TableGeoLookup } from './table-geo-lookup.js';

/** Where the tables come from, once the configuration's paths are resolved. */
export interface GeoSources {
  asn: { mmdb: string } | 'shipped';
  country: { mmdb: string } | 'shipped';
}

/** The sources `config` names; relative database paths are taken from `dataDir`. */
export function geoSources(config: GeoConfig, dataDir: string): GeoSources {
  return {
    asn: config.asnDatabase ? { mmdb: resolve(dataDir, config.asnDatabase) } : 'shipped',
    country: config.countryDatabase ? { mmdb: resolve(dataDir, config.countryDatabase) } : 'shipped',
  };
}

const NO_TABLES: GeoTables = { v4: EMPTY_V4, v6: EMPTY_V6 };

/**
 * The GeoLookup of `config` (every answer 0 when it is disabled); tables load lazily, and a
 * missing or damaged user database throws GeoDataError, naming its path, from the first lookup
 * of its kind or from `loadAll()`.
 */
export function openGeoLookup(config: GeoConfig, dataDir: string): TableGeoLookup & GeoLookup {
  if (!config.enabled) return new TableGeoLookup(() => NO_TABLES);
  const sources = geoSources(config, dataDir);
  return new TableGeoLookup((kind: GeoKind) => {
    const source = sources[kind];
    return source === 'shipped' ? loadShippedTables(kind) : loadMmdbTables(kind, source.mmdb);
  });
}
