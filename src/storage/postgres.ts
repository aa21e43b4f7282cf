/** PostgreSQL behind the `Database` interface: a pool that survives dead connections, and LISTEN. */
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Database, ListenEvents, Orm } from './database';
import { StatementPriority } from './priority';
import * as schema from './schema';

/**
 * A pool whose checked-out clients survive their connection dying. A connection the server ends
 * (a restart, `pg_terminate_backend`, a network cut) emits 'error' on its client; pg-pool
 * listens only while the client is idle, so a checked-out one (inside a transaction or a
 * session) would crash the process. And drizzle's transaction never releases a client whose
 * `begin` failed, so each such death would leak a pool slot until the pool is exhausted. Here a
 * checked-out client that errors is released at once (pg-pool drops it, the slot is free again)
 * and a later release of it is a no-op: the statement in flight fails with the error, and the
 * next one gets a fresh connection.
 */
class ResilientPool extends pg.Pool {
  constructor(config: pg.PoolConfig) {
    super(config);
    // Idle, checked out or in between: no client's 'error' ever goes unheard.
    this.on('connect', (client) => client.on('error', () => {}));
    this.on('error', () => {});
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(
    callback?: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): Promise<pg.PoolClient> | undefined {
    // The callback form is pg-pool's own `query`, which already releases on error.
    if (callback) {
      super.connect(callback);
      return undefined;
    }
    return super.connect().then((client) => {
      const release = client.release;
      let released = false;
      const onError = (error: Error) => client.release(error);
      client.release = (err?: Error | boolean) => {
        if (released) return;
        released = true;
        client.removeListener('error', onError);
        release.call(client, err);
      };
      client.on('error', onError);
      return client;
    });
  }
}

export async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new ResilientPool({ connectionString: url, max: poolSize });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end();
    throw new Error(
      `cannot connect to PostgreSQL at ${redact(url)}: ${(error as Error).message}. ` +
        'Check DATABASE_URL, or unset it to use the embedded database.',
      { cause: error },
    );
  }
  const orm = drizzlePg({ client: pool, schema }) as unknown as Orm;
  const listener = new PgListener(url);

  return {
    kind: 'postgres',
    writeGeneration: () => null,
    // A pool: each caller has its own connection, so nothing waits for another's statements.
    priority: new StatementPriority(false),
    label: `postgres ${redact(url)}`,
    orm,
    async rows<T>(query: SQL) {
      const result = await orm.execute(query);
      return (result as unknown as { rows: T[] }).rows;
    },
    listen: (channel, onPayload, events) => listener.subscribe(channel, onPayload, events ?? {}),
    async notify(channel, payload) {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn(drizzlePg({ client, schema }) as unknown as Orm);
      } finally {
        client.release();
      }
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}

/** Reconnect delays of the LISTEN connection: doubling from the first, capped at the last. */
const LISTEN_RECONNECT_MS = { first: 100, max: 5_000 } as const;

interface Subscription {
  channel: string;
  onPayload: (payload: string) => void;
  events: ListenEvents;
}

/**
 * The one dedicated LISTEN connection of a PostgreSQL database. When the server ends it, it is
 * opened again with backoff (100 ms doubling to 5 s, with jitter), LISTENs on every subscribed
 * channel again, and then tells each subscriber (`onReconnect`) so it can catch up on what it
 * missed.
 */
class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly subscriptions = new Set<Subscription>();
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly url: string) {}

  async subscribe(
    channel: string,
    onPayload: (payload: string) => void,
    events: ListenEvents,
  ): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('the database is closed');
    const subscription: Subscription = { channel, onPayload, events };
    const listening = this.channels().has(channel);
    this.subscriptions.add(subscription);
    try {
      const client = await this.connected();
      // (A connection opened just now already listens on it; LISTEN twice is a no-op.)
      if (!listening) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      this.subscriptions.delete(subscription);
      throw error;
    }
    return async () => {
      this.subscriptions.delete(subscription);
      if (this.channels().has(channel)) return;
      await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => {});
  }

  private channels(): Set<string> {
    return new Set([...this.subscriptions].map((s) => s.channel));
  }

  /** The live connection, opening it (and listening on every channel) when there is none. */
  private connected(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    let lost = false;
    const onLost = (error: Error) => {
      if (lost) return;
      lost = true;
      client.end().catch(() => {});
      if (this.client === client) {
        this.client = null;
        this.lost(error);
      }
    };
    // Attached before connecting: an 'error' with no listener would crash the process.
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the LISTEN connection ended')));
    client.on('notification', (msg) => {
      for (const s of this.subscriptions) if (s.channel === msg.channel) s.onPayload(msg.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.channels()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      lost = true;
      await client.end().catch(() => {});
      throw new Error('the database is closed');
    }
    this.client = client;
    return client;
  }

  private lost(error: Error): void {
    for (const s of this.subscriptions) s.events.onLost?.(error);
    this.failures = 0;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.subscriptions.size === 0) return;
    const base = Math.min(LISTEN_RECONNECT_MS.max, LISTEN_RECONNECT_MS.first * 2 ** this.failures);
    const delay = Math.round(base * (0.5 + Math.random() / 2));
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.connected().then(
        () => {
          this.failures = 0;
          for (const s of this.subscriptions) s.events.onReconnect?.();
        },
        () => {
          this.failures++;
          this.scheduleReconnect();
        },
      );
    }, delay);
    // Reconnecting must not keep a process alive that is otherwise done.
    this.retryTimer.unref();
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}
