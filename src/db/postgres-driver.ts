import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { Driver } from "./driver";

const POOL_SIZE = 10;
const POOL_CONNECT_TIMEOUT_MS = 5_000;

export function openPostgresDriver(url: string): Driver {
  // A connection timeout keeps a dead server from hanging requests. More than one connection: with
  // Prisma 7's pg adapter, a pool of one can time out the first interactive transaction.
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS });
  // When PostgreSQL stops or restarts, every open connection emits "error". The adapter listens on
  // idle connections and inside transactions only; a connection checked out for a plain query in
  // between had no listener, and an unheard "error" event ends the process. Every connection gets
  // one for its whole life: the query running on it fails (and answers 503), the pool drops it.
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("error", () => {});
  return {
    factory: new PrismaPg(pool),
    // Migrations get their own short-lived pool: the schema engine holds a session-level advisory
    // lock, which only closing its connection releases for other instances.
    migrationFactory: new PrismaPg({ connectionString: url, max: 2, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS }),
    // pg's pool is shared with Prisma's adapter: these statements take turns with Prisma's on the same connections.
    sql: {
      query: async <T>(text: string, params: readonly unknown[]) =>
        (await pool.query(text, params as unknown[])).rows as T[],
      script: async (text: string) => {
        // Without parameters pg sends a simple query; with several statements it answers a list.
        const results = (await pool.query(text)) as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results : [results]).map((result) => result.rows as unknown[]);
      },
    },
    close: () => pool.end(),
  };
}
