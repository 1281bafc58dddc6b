/**
 * The tables' upkeep in the real gateway. On the embedded database the rows ingestion writes and the
 * outcomes the worker records are counted, and once EMBEDDED_VACUUM_ROWS have changed, the milestone
 * and delivery tables are vacuumed and analysed and the log checkpointed. Seen through
 * `pg_class.reltuples`, which is -1 until a table is first vacuumed or analysed, and the last
 * checkpoint's position (PGlite does none of these by itself). On PostgreSQL a backlog that grows
 * faster than autovacuum looks gets the claim's table analysed by the gateway.
 */
import type { App } from "../src/app";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

const SHIPMENT = "/carrier/handling/shipment";
const UNWATCHED_AWB = "020-12345675";
const WATCHED_AWB = "020-12345686";

describe("the embedded database's upkeep in the gateway", () => {
  const disposers = new Disposers();
  let app: App;
  let url: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    ({ app, url } = await startApp("pglite", disposers, {
      EMBEDDED_VACUUM_ROWS: "25",
      RETENTION_INTERVAL_MS: "0",
      DELIVERY_POLL_MS: "50",
    }));
  }, 120_000);
  afterAll(() => disposers.disposeAll());

  /** The planner's row estimate of each table (-1: never vacuumed or analysed). */
  const estimates = async (): Promise<Record<string, number>> => {
    const rows = await app.database.prisma.$queryRawUnsafe<Array<{ table: string; rows: number }>>(
      `SELECT relname AS table, reltuples::float8 AS rows FROM pg_class
       WHERE relname IN ('status_event', 'delivery', 'delivery_attempt') AND relkind = 'r'`,
    );
    return Object.fromEntries(rows.map((r) => [r.table, Number(r.rows)]));
  };
  const lastCheckpoint = async (): Promise<string> => {
    const [row] = await app.database.prisma.$queryRawUnsafe<Array<{ lsn: string }>>(
      "SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()",
    );
    return row!.lsn;
  };
  const ingest = async (awb: string, states: string[]) => {
    const answer = await fetch(`${url}${SHIPMENT}/events`, {
      method: "POST",
      headers,
      body: JSON.stringify(states.map((state) => ({ awb, state }))),
    });
    expect(answer.status).toBe(202);
  };

  it("vacuums and analyses the busy tables, and checkpoints, once the rows written and recorded reach the threshold", async () => {
    expect(await estimates()).toEqual({ status_event: -1, delivery: -1, delivery_attempt: -1 });
    const checkpointAtStart = await lastCheckpoint();

    // 10 milestones nobody subscribed to: 10 rows changed.
    await ingest(UNWATCHED_AWB, ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD"]);
    // PGlite runs statements in turn: a vacuum started at that commit would have ended before this read.
    expect((await estimates()).status_event).toBe(-1);
    expect(await lastCheckpoint()).toBe(checkpointAtStart);
    const created = await fetch(`${url}${SHIPMENT}/subscribe`, {
      method: "POST",
      headers,
      body: JSON.stringify({ awb: WATCHED_AWB, callback: `${receiver.url}/ok/upkeep`, states: "*" }),
    });
    expect(created.status).toBe(201);
    // 3 milestones and their 3 deliveries: 16 rows changed. Only the last of their recorded outcomes
    // (3 rows each: claimed, recorded, attempt added) takes the count to 25, however they are batched.
    await ingest(WATCHED_AWB, ["RCS", "MAN", "DEP"]);
    await until(() => receiver.posts.length === 3, { what: "the three callbacks" });

    await until(async () => ((await estimates()).delivery ?? -1) >= 0, { what: "the delivery table analysed" });
    expect(await estimates()).toEqual({ status_event: 13, delivery: 3, delivery_attempt: 3 });
    await until(async () => (await lastCheckpoint()) !== checkpointAtStart, { what: "a checkpoint" });
  });
});

describeBackend("postgres")("on PostgreSQL, a backlog that outgrows the claim's statistics", () => {
  const disposers = new Disposers();
  let app: App;
  let url: string;
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
  const AWBS = Array.from({ length: 10 }, (_, i) => `020-${2_000_000 + i}${(2_000_000 + i) % 7}`);

  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    // No worker: the deliveries stay pending, a backlog as when receivers are down or slow.
    ({ app, url } = await startApp("postgres", disposers, { DELIVERY_WORKER: "false", RETENTION_INTERVAL_MS: "0" }));
  }, 120_000);
  afterAll(() => disposers.disposeAll());

  /** The gateway's own ANALYZEs of `delivery` (autovacuum's are counted apart, as autoanalyze). */
  const analyses = async (): Promise<{ count: number; reltuples: number }> => {
    const [row] = await app.database.sql.query<{ count: number; reltuples: number }>(
      `SELECT s.analyze_count::int AS count, c.reltuples::float8 AS reltuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'delivery'`,
      [],
    );
    return row!;
  };

  it("is analysed by the gateway as it grows, not left to autovacuum's next look", async () => {
    for (const awb of AWBS) {
      const created = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers,
        body: JSON.stringify({ awb, callback: `${receiver.url}/ok/backlog`, states: "*" }),
      });
      expect(created.status).toBe(201);
    }
    expect((await analyses()).count).toBe(0);
    // Each call: 500 milestones and their 500 deliveries. The gateway looks at the statistics every
    // 5,000 rows written; the counts it reads reach the server's statistics up to a few seconds late,
    // so it may take a few looks.
    let calls = 0;
    while ((await analyses()).count === 0) {
      expect(calls).toBeLessThan(60);
      const events = Array.from({ length: 500 }, (_, k) => ({
        eventId: `burst-${calls}-${k}`,
        awb: AWBS[k % AWBS.length],
        state: "DEP",
      }));
      const answer = await fetch(`${url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers,
        body: JSON.stringify(events),
      });
      expect(answer.status).toBe(202);
      calls++;
    }
    const { count, reltuples } = await analyses();
    expect(count).toBe(1);
    // It counted the backlog it had then: at least the 2,500 deliveries of the first look.
    expect(reltuples).toBeGreaterThanOrEqual(2_500);
  });
});
