#!/usr/bin/env node
// Runs a TypeScript entry point (benchmarks, scripts) through tsx's loader.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts.mjs <file.ts> [args...]');
  process.exit(2);
}
process.argv.splice(1, 1);
await import(pathToFileURL(resolve(entry)).href);
