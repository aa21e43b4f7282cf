/**
 * Peer for Python cases: Debian's `bandit`, found on PATH (`apt-get install -y bandit`). When it
 * is absent the eval says so and goes on; it never fails for a missing peer. Every severity and
 * confidence counts, and `# nosec` comments are ignored, so bandit is given every chance.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { addFlag, type Peer, type PeerRun } from './peer';

const run = promisify(execFile);

interface BanditOutput {
  results?: { filename: string; line_number: number; line_range?: number[] }[];
  errors?: { filename: string; reason: string }[];
}

export const banditPeer: Peer = {
  name: 'bandit',
  languages: ['python'],

  async version() {
    try {
      const { stdout, stderr } = await run('bandit', ['--version'], { timeout: 30_000 });
      const first = `${stdout}${stderr}`.split('\n').find((l) => /bandit/i.test(l)) ?? 'bandit';
      return first.trim();
    } catch {
      return null;
    }
  },

  async flag(headDir, paths) {
    const out: PeerRun = { flagged: new Map(), gaps: [] };
    if (paths.length === 0) return out;
    let stdout: string;
    try {
      ({ stdout } = await run('bandit', ['-f', 'json', '-q', '--ignore-nosec', '--', ...paths], {
        cwd: headDir,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000,
      }));
    } catch (error) {
      // bandit exits 1 when it reports something; its JSON is still on stdout.
      stdout = (error as { stdout?: string }).stdout ?? '';
      if (!stdout) {
        out.gaps.push(`bandit failed: ${(error as Error).message.split('\n')[0]}`);
        return out;
      }
    }
    const parsed = JSON.parse(stdout) as BanditOutput;
    for (const r of parsed.results ?? []) {
      const path = r.filename.replace(/^\.\//, '');
      for (const line of r.line_range?.length ? r.line_range : [r.line_number])
        addFlag(out.flagged, path, line);
    }
    for (const e of parsed.errors ?? []) out.gaps.push(`bandit could not read ${e.filename}: ${e.reason}`);
    return out;
  },
};
