// Gateway processes on a real PostgreSQL for the delivery fault and rate tests: a database each, the
// admin key, subscriptions and bursts of events over HTTP.
import { Client } from "pg";
import { STATUS_CODES } from "../../src/domain/status";
import { postJson } from "./http";
import { createPostgresDatabase } from "./postgres";
import { spawnServer, type ServerProcess } from "./process";

export const KEY = "cgw_fault-test-admin-key-00000001";
const auth = { authorization: `Bearer ${KEY}` };

/** What a test releases after it, last added first (the caller's afterEach runs them). */
export type Cleanups = Array<() => unknown>;

export function awbFor(i: number): string {
  const serial = String(2_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
}

export async function setupDeliveryServers(cleanups: Cleanups, env: Record<string, string> = {}) {
  const database = await createPostgresDatabase();
  cleanups.push(database.drop);
  const sql = new Client({ connectionString: database.url });
  await sql.connect();
  cleanups.push(() => sql.end());
  const serverEnv = {
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
    DELIVERY_POLL_MS: "100",
    LOG_LEVEL: "info",
    ...env,
  };
  const servers: ServerProcess[] = [];
  const start = async (extra: Record<string, string> = {}) => {
    const server = await spawnServer({ ...serverEnv, ...extra });
    servers.push(server);
    return server;
  };
  cleanups.push(async () => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    await Promise.all(servers.map((s) => s.exited));
  });
  return { sql, start };
}

export async function subscribeAll(url: string, callbackBase: string, awbs: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const awb of awbs) {
    const res = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb, callback: `${callbackBase}/${awb}`, states: "*" },
      auth,
    );
    expect(res.status).toBe(201);
    ids.push(res.body.subscriptionId);
  }
  return ids;
}

/** `count` events over `awbs`, each with its own eventId, ingested in batches of 500. */
export async function ingestBurst(url: string, awbs: string[], count: number, tag: string): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const batch = Array.from({ length: Math.min(500, count - start) }, (_, k) => {
      const i = start + k;
      return { eventId: `${tag}-${i}`, awb: awbs[i % awbs.length]!, state: STATUS_CODES[i % STATUS_CODES.length]! };
    });
    const res = await postJson(`${url}/carrier/handling/shipment/events`, batch, auth);
    expect(res.status).toBe(202);
    expect(res.body.events.every((e: { matchedSubscriptions: number }) => e.matchedSubscriptions === 1)).toBe(true);
  }
}
