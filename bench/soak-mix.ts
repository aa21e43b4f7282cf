/**
 * The request mix of `npm run bench:soak`: which kinds of request, in what shares, and the order
 * they are sent in. Shares are weights (the mix below is per 10,000 requests); the order spreads each kind evenly over the
 * cycle (smooth weighted round robin), so a rare write arrives at a steady rate instead of in a
 * burst at one end of the cycle.
 */

export interface MixShare {
  kind: string;
  /** Requests of this kind per cycle. */
  weight: number;
}

/**
 * One cycle of kind indexes, `Σ weight` long, each kind `weight` times, evenly spread: at every
 * step each kind gains its weight, the kind with the most credit is sent and pays the total.
 * Deterministic (ties go to the earlier kind), so every run sends the same sequence.
 */
export function interleave(shares: readonly MixShare[]): number[] {
  if (shares.some((s) => !Number.isInteger(s.weight) || s.weight < 0))
    throw new Error('mix weights must be whole numbers ≥ 0');
  const total = shares.reduce((sum, s) => sum + s.weight, 0);
  if (total === 0) throw new Error('the mix is empty');
  const credit = shares.map(() => 0);
  const order: number[] = [];
  for (let step = 0; step < total; step++) {
    let best = -1;
    for (let i = 0; i < shares.length; i++) {
      const weight = (shares[i] as MixShare).weight;
      if (weight === 0) continue;
      credit[i] = (credit[i] ?? 0) + weight;
      if (best < 0 || (credit[i] as number) > (credit[best] as number)) best = i;
    }
    credit[best] = (credit[best] as number) - total;
    order.push(best);
  }
  return order;
}

/**
 * The soak's mix, per 10,000 requests: mostly the reads a dashboard or a CI job polls, five
 * learnings and one review every ten seconds at 500 req/s. The embedded server runs on one core
 * beside the load generator, and one review a second (executed by its in-process worker) or 24
 * learnings a second already take more than that core, so the soak would measure a queue, not
 * the server (docs/benchmarks.md has the figures).
 */
export const SOAK_MIX: readonly MixShare[] = [
  { kind: 'task status', weight: 3000 },
  { kind: 'task read', weight: 1000 },
  { kind: 'findings list', weight: 2000 },
  { kind: 'review read', weight: 1000 },
  { kind: 'project read', weight: 1500 },
  { kind: 'healthz', weight: 1000 },
  { kind: 'learning create', weight: 100 },
  { kind: 'review create', weight: 2 },
];
