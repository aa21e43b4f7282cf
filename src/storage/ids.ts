/** New record ids: the kind's prefix and a time-ordered ULID (`tsk_01J…`). */
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulidx';
import { ID_PREFIX, type IdKind } from '../core/ids';

/**
 * ulidx's own generator asks the system's CSPRNG for one byte per character (16 calls per id,
 * a measurable share of a review acknowledgement); the same bytes drawn from a pool refilled
 * 4 KiB at a time.
 */
const pool = new Uint8Array(4096);
let used = pool.length;
function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] as number;
}

// ulidx maps the number to a character as Math.floor(prng() * 32) % 32, as its own prng does.
const ulid = monotonicFactory(() => randomByte() / 0xff);

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid().toLowerCase()}`;
}
