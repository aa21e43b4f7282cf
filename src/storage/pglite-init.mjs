// Creates a new PGlite data directory, then exits. Run as a child process by openDatabase:
// initdb takes PGlite's WebAssembly heap to ~860 MiB, and a wasm heap never shrinks, so doing
// it in a short-lived process leaves the service at the ~340 MiB of an existing data dir.
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: pglite-init.mjs <data dir>');
  process.exit(2);
}
const db = await PGlite.create(dir);
await db.close();
