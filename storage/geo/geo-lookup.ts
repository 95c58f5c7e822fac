/**
 * Where an address is: its origin AS and its country, looked up per row of a
 * FlowBatch address column. Implementations live beside this file.
 */

/** Origin AS and country of the addresses in a FlowBatch column. */
export interface GeoLookup {
  /** Origin AS of the 16-byte (IPv4-mapped) address at column[row*16 …], 0 when unknown. */
  asOf(column: Uint8Array, row: number): number;
  /** ISO country of that address as a u16 (first letter << 8 | second letter, ASCII upper case), 0 when unknown. */
  countryOf(column: Uint8Array, row: number): number;
}
