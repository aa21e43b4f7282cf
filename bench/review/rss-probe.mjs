// Preloaded into a measured `svc review` process (node --import): at exit, writes the process's
// peak resident set size (maxRSS, bytes) to the file named by SVC_BENCH_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.SVC_BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    writeFileSync(file, String(process.resourceUsage().maxRSS * 1024));
  });
}
