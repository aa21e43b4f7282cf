/** New record ids: the kind's prefix and a time-ordered ULID (`tsk_01J…`). */
import { monotonicFactory } from 'ulidx';
import { ID_PREFIX, type IdKind } from '../core/ids';

const ulid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid().toLowerCase()}`;
}
