import { randomBytes } from "node:crypto";
import { Client } from "pg";

export const POSTGRES_ADMIN_URL_ENV = "TEST_POSTGRES_ADMIN_URL";
export const POSTGRES_UNAVAILABLE_ENV = "TEST_POSTGRES_UNAVAILABLE";

export function postgresAvailable(): boolean {
  return process.env[POSTGRES_ADMIN_URL_ENV] !== undefined;
}

async function admin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const url = process.env[POSTGRES_ADMIN_URL_ENV];
  if (!url) throw new Error(process.env[POSTGRES_UNAVAILABLE_ENV] ?? "PostgreSQL is not available");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database of its own for one test file (so files run in parallel); dropped by `drop`. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gw_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(process.env[POSTGRES_ADMIN_URL_ENV]!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}
