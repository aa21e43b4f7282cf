#!/usr/bin/env node
/**
 * The web console's first-page budget: the JavaScript index.html loads (its module scripts and
 * modulepreloads), gzipped, must stay under 200 KB. `npm run size:web` prints it and fails over
 * budget; test/http/console.test.ts asserts the same.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const BUDGET_BYTES = 200 * 1024;
export const DIST = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', 'web', 'dist');

/** The JavaScript files index.html loads before the first page shows, with their gzip sizes. */
export function firstPageJs(dist = DIST) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const srcs = [
    ...[...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]),
    ...[...html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g)].map((m) => m[1]),
  ];
  const files = [...new Set(srcs)].map((src) => {
    const bytes = readFileSync(join(dist, src.replace(/^\//, '')));
    return { src, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  return { files, gzip: files.reduce((n, f) => n + f.gzip, 0), raw: files.reduce((n, f) => n + f.raw, 0) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let measured;
  try {
    measured = firstPageJs();
  } catch (error) {
    console.error(`web-size: cannot read the built console (${error.message}); run npm run build:web`);
    process.exit(2);
  }
  for (const f of measured.files) console.log(`${f.src}: ${f.raw} B, ${f.gzip} B gzipped`);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `first page JavaScript: ${kb(measured.raw)}, ${kb(measured.gzip)} gzipped (budget ${kb(BUDGET_BYTES)})`,
  );
  if (measured.gzip >= BUDGET_BYTES) {
    console.error('web-size: over budget');
    process.exit(1);
  }
}
