#!/usr/bin/env node
// The `svc` command (also installed as `svc-review`, the package's name, for `npx svc-review`).
// It runs the compiled build in dist/ (`npm run build`; `npm install` runs it through
// `prepare`), so starting needs no TypeScript loader. main.ts loads each command's modules only
// when that command runs. Stack traces name the TypeScript sources with
// NODE_OPTIONS=--enable-source-maps (off by default: reading the maps costs ~80 ms of every start).
import { existsSync } from 'node:fs';
import module from 'node:module';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error(
    'svc is not built: dist/cli/main.js is missing. Run `npm run build` (npm install runs it) in the svc folder.',
  );
  process.exit(1);
}
// Node 22.1+ keeps V8's compiled code between starts (most of a start is compiling modules);
// on Node 20 there is no such cache and this does nothing.
module.enableCompileCache?.();
await import(entry.href);
