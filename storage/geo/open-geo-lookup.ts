/**
 * Builds the GeoLookup the configuration asks for: the shipped tables (ip-location-db.ts), each
 * kind replaced by the user's MaxMind DB when one is named (mmdb.ts), kept built under
 * `<dataDir>/geo/` (table-cache.ts); nothing is read until the first lookup of a kind (or
 * `loadAll()`).
 */
import { join, resolve } from 'node:path';
import type { GeoConfig } from './geo-config.js';
import type { GeoLookup } from './geo-lookup.js';
import { loadShippedTables, shippedTablePaths, type GeoKind, type GeoTables } from './ip-location-db.js';
import { loadMmdbTables } from './mmdb.js';
import { EMPTY_V4, EMPTY_V6 } from './range-table.js';
import { cachedTables, sourceKey } from './table-cache.js';
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

/** Where built tables are kept: a directory, or false for none (each process builds them). */
export interface GeoLookupOptions {
  cacheDir?: string | false;
}

/**
 * The GeoLookup of `config` (every answer 0 when it is disabled); tables load lazily, and a
 * missing or damaged user database throws GeoDataError, naming its path, from the first lookup
 * of its kind or from `loadAll()`. Built tables are kept in `<dataDir>/geo/` unless `cacheDir` says otherwise.
 */
export function openGeoLookup(config: GeoConfig, dataDir: string, options: GeoLookupOptions = {}): TableGeoLookup & GeoLookup {
  if (!config.enabled) return new TableGeoLookup(() => NO_TABLES);
  const sources = geoSources(config, dataDir);
  const cacheDir = options.cacheDir ?? join(dataDir, 'geo');
  return new TableGeoLookup((kind: GeoKind) => {
    const source = sources[kind];
    const build = (): GeoTables => (source === 'shipped' ? loadShippedTables(kind) : loadMmdbTables(kind, source.mmdb));
    if (cacheDir === false) return build();
    const files = source === 'shipped' ? Object.values(shippedTablePaths(kind)) : [source.mmdb];
    // The loader's version first: a change to how tables are built must not reuse older files.
    return cachedTables(cacheDir, kind, sourceKey(files) && `tables-1|${kind}|${sourceKey(files)}`, build);
  });
}
