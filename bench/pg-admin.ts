/** A short-lived connection to the PostgreSQL server's admin database, for creating and dropping the benchmarks' own databases. */
import pg from 'pg';

export async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
