#!/usr/bin/env node
/**
 * Which code ran during each event-loop stall of a profiled review (BENCH_CPU_PROF=1):
 *   node bench/review/stall-frames.mjs tmp/bench-review-prof/CPU.<…>.<pid>.0.001.cpuprofile [count]
 * reads the stalls the review process wrote beside its profile (stalls-<pid>.json, monotonic
 * microseconds like the profile's timestamps) and prints, for the longest stalls, the project's
 * functions most often on the stack in the samples taken inside each.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const [profilePath, countArg] = process.argv.slice(2);
if (!profilePath) {
  console.error('usage: stall-frames.mjs <cpuprofile> [count]');
  process.exit(2);
}
const pid = basename(profilePath).split('.')[3];
const profile = JSON.parse(readFileSync(profilePath, 'utf8'));
const windows = JSON.parse(readFileSync(join(dirname(profilePath), `stalls-${pid}.json`), 'utf8'));

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const label = ({ callFrame: f }) =>
  `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-3).join('/')}`;

// Sample timestamps, absolute (the profile stores deltas).
const times = [];
let t = profile.startTime;
for (const delta of profile.timeDeltas) {
  t += delta;
  times.push(t);
}

const longest = [...windows].sort((a, b) => b.toUs - b.fromUs - (a.toUs - a.fromUs));
for (const w of longest.slice(0, Number(countArg ?? 10))) {
  const counts = new Map();
  let samples = 0;
  for (let i = 0; i < times.length; i++) {
    if (times[i] < w.fromUs || times[i] > w.toUs) continue;
    samples++;
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parentOf.get(id)) {
      const node = nodes.get(id);
      if (!node.callFrame.url.includes('/src/') && !node.callFrame.functionName.startsWith('(')) continue;
      const key = label(node);
      if (seen.has(key)) continue;
      seen.add(key);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const ms = ((w.toUs - w.fromUs) / 1000).toFixed(0);
  console.log(`${ms} ms stall in step ${w.step ?? '?'} (${samples} samples)`);
  for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`  ${String(n).padStart(5)}  ${key}`);
}
