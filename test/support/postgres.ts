import { randomBytes } from "node:crypto";
import { Client } from "pg";

export const POSTGRES_ADMIN_URL_ENV = "TEST_POSTGRES_ADMIN_URL";
export const POSTGRES_UNAVAILABLE_ENV = "TEST_POSTGRES_UNAVAILABLE";
/** The migrated template database the global setup made (test/support/global-setup.ts). */
export const POSTGRES_TEMPLATE_ENV = "TEST_POSTGRES_TEMPLATE";

export function postgresAvailable(): boolean {
  return process.env[POSTGRES_ADMIN_URL_ENV] !== undefined;
}

export async function admin<T>(
  work: (client: Client) => Promise<T>,
  url = process.env[POSTGRES_ADMIN_URL_ENV],
): Promise<T> {
  if (!url) throw new Error(process.env[POSTGRES_UNAVAILABLE_ENV] ?? "PostgreSQL is not available");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the admin URL's server. */
export function databaseUrl(name: string, adminUrl = process.env[POSTGRES_ADMIN_URL_ENV]!): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A database of its own for one test file (so files run in parallel), dropped by `drop`. Migrated by
 * default: a copy of the global setup's template (migrated, with the bundled stations), which the gateway opens without loading the schema
 * engine. `{ empty: true }` for a test of migrations or of a restore.
 */
export async function createPostgresDatabase({ empty = false } = {}): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `gw_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const template = process.env[POSTGRES_TEMPLATE_ENV];
  await admin((c) => c.query(`CREATE DATABASE "${name}"${!empty && template ? ` TEMPLATE "${template}"` : ""}`));
  return {
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}
