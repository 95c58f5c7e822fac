/**
 * The enrichment's section of the configuration (`geo`): its schema, owned here beside the
 * lookup that reads it; src/config.ts composes it.
 */
import { z } from 'zod';

/** The `geo` section of the configuration. */
export const geoSchema = z
  .object({
    /** Origin AS and country of flow addresses; false answers 0 (unknown) for every address and loads no table. */
    enabled: z.boolean().default(true),
    /**
     * A MaxMind DB with `autonomous_system_number` (GeoLite2-ASN, GeoIP2-ISP, …) to use instead of
     * the shipped AS table; a relative path is taken from the data directory.
     */
    asnDatabase: z.string().min(1).optional(),
    /** A MaxMind DB with `country.iso_code` (GeoLite2-Country, GeoLite2-City, …) to use instead of the shipped country table; relative as above. */
    countryDatabase: z.string().min(1).optional(),
  })
  .strict();

/** The validated `geo` section. */
export type GeoConfig = z.infer<typeof geoSchema>;
