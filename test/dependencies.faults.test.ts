/**
 * Dependencies failing while the gateway runs, with real services the test owns and stops:
 * PostgreSQL (requests answer 503, nothing accepted is lost, full recovery without restart) and
 * Redis (live fan-out degrades to the instance, then resumes across instances).
 */
import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, postJson } from "./support/http";
import { createPostgresDatabase } from "./support/postgres";
import { startPrivatePostgres, startPrivateRedis } from "./support/private-services";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { liveSubscriptionsRunning, metric, openSubscriber } from "./support/ws-protocol";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
// getJson aborts after 15 s: a hang fails the test (TimeoutError), it is never a slow pass.
const call = getJson;
const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...admin, ...headers },
  body: JSON.stringify(body),
});

describeBackend("postgres")("PostgreSQL stopped while the gateway runs", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("answers 503 (never hangs, never 500) while it is down, loses no accepted event, and recovers without a restart", async () => {
    const postgres = await startPrivatePostgres();
    disposers.add(() => postgres.dispose());
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { url } = await startApp("postgres", disposers, {
      DATABASE_URL: postgres.url,
      RATE_LIMIT_PER_SECOND: "0",
      DELIVERY_POLL_MS: "100",
      DELIVERY_RETRY_SCHEDULE: "1s,1s,1s,1s,1s",
    });
    const awb = "020-12345675";
    const created = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb, callback: `${receiver.url}/ok/outage`, states: "*" },
      admin,
    );
    expect(created.status).toBe(201);

    // Ingestion runs throughout: before, during and after the outage.
    const accepted = new Set<string>();
    const refused: string[] = [];
    /** How each refusal answered (status, content type, Retry-After, code), asserted once the loops end. */
    const refusals = new Set<string>();
    const outcomes = new Map<string, number>();
    let n = 0;
    let loading = true;
    const ingestLoops = [0, 1, 2, 3].map(async () => {
      while (loading) {
        const eventId = `outage-${++n}`;
        const result = await call(
          `${url}/carrier/handling/shipment/events`,
          json({ eventId, awb, state: "RCS", timestamp: new Date(Date.UTC(2026, 10, 21, 0, 0, n)).toISOString() }),
        );
        outcomes.set(String(result.status), (outcomes.get(String(result.status)) ?? 0) + 1);
        if (result.status === 202) accepted.add(eventId);
        else {
          refused.push(eventId);
          refusals.add(
            JSON.stringify({
              status: result.status,
              type: result.headers.get("content-type"),
              retryAfter: result.headers.get("retry-after"),
              code: result.body?.code,
            }),
          );
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    await until(() => accepted.size >= 5, { what: "ingestion before the outage" });

    await postgres.stop();
    const ready = await call(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toMatchObject({ status: "unavailable", database: "down" });
    // Every kind of route while it is down: 503 problem+json or a GraphQL SERVICE_UNAVAILABLE; stations still answer from memory.
    const during = [
      await call(`${url}/carrier/handling/shipment/subscribe/${created.body.subscriptionId}`, { headers: admin }),
      await call(
        `${url}/carrier/handling/shipment/subscribe`,
        json({ awb: "020-12345686", callback: `${receiver.url}/ok/x`, states: "*" }),
      ),
      await call(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers: admin }),
    ];
    for (const response of during) {
      expect(response.status).toBe(503);
      expect(response.body.code).toBe("SERVICE_UNAVAILABLE");
    }
    const graphql = await call(`${url}/graphql`, json({ query: `{ milestones(awb: "${awb}") { state } }` }));
    expect(graphql.body.errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");
    expect((await call(`${url}/carrier/stations/station/FRA`)).status).toBe(200);
    await until(() => refused.length >= 40, { what: "ingestion refused during the outage" });

    await postgres.start();
    await until(async () => (await call(`${url}/readyz`)).status === 200, { what: "ready again", timeoutMs: 30_000 });
    const acceptedBefore = accepted.size;
    await until(() => accepted.size >= acceptedBefore + 5, { what: "ingestion after recovery" });
    loading = false;
    await Promise.all(ingestLoops);
    // Every refusal (at least 40, above) was the same 503 problem: the service is unavailable, try again in 5 s.
    expect([...refusals].map((r) => JSON.parse(r))).toEqual([
      {
        status: 503,
        type: expect.stringContaining("application/problem+json"),
        retryAfter: "5",
        code: "SERVICE_UNAVAILABLE",
      },
    ]);

    // Nothing accepted is lost, nothing refused was stored: the history holds exactly the 202s.
    const history = await call(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers: admin });
    expect(history.status).toBe(200);
    const stored = history.body.map((e: { clientEventId: string }) => e.clientEventId).sort();
    expect(stored).toEqual([...accepted].sort());
    // …and every accepted event reaches the callback once the database is back.
    await until(
      () =>
        new Set(receiver.posts.filter((p) => p.path === "/ok/outage").map((p) => p.headers["webhook-id"])).size >=
        accepted.size,
      { what: "every notification delivered", timeoutMs: 30_000 },
    );
    console.log(
      `PostgreSQL outage: ${n} ingestion calls — ${accepted.size} accepted (all stored and delivered), ${refused.length} refused with 503, 0 hung, 0 lost; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`,
    );
  }, 120_000);
});

describeBackend("postgres")("PostgreSQL stopped under open websockets", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("keeps live subscribers connected through the outage (the key re-check fails, it does not revoke) and serves them after it", async () => {
    const postgres = await startPrivatePostgres();
    disposers.add(() => postgres.dispose());
    const { app, url } = await startApp("postgres", disposers, {
      DATABASE_URL: postgres.url,
      RATE_LIMIT_PER_SECOND: "0",
      LIVE_KEY_RECHECK_MS: "200",
    });
    // Each re-check looks the key up: counted when the lookup fails.
    let failedRechecks = 0;
    const keyStatus = app.services.clients.keyStatus;
    app.services.clients.keyStatus = (id) =>
      keyStatus(id).catch((error: unknown) => {
        failedRechecks++;
        throw error;
      });
    const awb = "020-12345675";
    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("1", `subscription($a: String!) { awbStatusChanged(awb: $a) { awb state } }`, { a: awb });
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === 1, {
      what: "the subscription running",
    });
    let closedWith: number | undefined;
    void subscriber.closed.then((code) => (closedWith = code));

    await postgres.stop();
    await until(() => failedRechecks >= 5 || closedWith !== undefined, {
      what: "five re-checks failing to reach the database",
    });
    expect(closedWith).toBeUndefined();
    await postgres.start();

    await until(
      async () =>
        (await postJson(`${url}/carrier/handling/shipment/events`, { awb, state: "ARR" }, admin)).status === 202,
      { what: "ingestion after the outage" },
    );
    await until(() => subscriber.received.length === 1, { what: "the live event after the outage" });
    expect(subscriber.received[0]).toEqual({ awbStatusChanged: { awb, state: "ARR" } });
    expect(closedWith).toBeUndefined();
  }, 60_000);
});

describeBackend("postgres")("Redis stopped while two instances share it", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  /** The station of every event A's subscriber receives (or what came instead of an event). */
  function watch(url: string): { events: string[]; client: Client } {
    const events: string[] = [];
    const client = createClient({
      url: `${url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    disposers.add(() => client.dispose());
    client.subscribe<{ statusEvents: { eventId: string; station: string } }>(
      { query: `subscription { statusEvents(awbs: ["020-12345675"]) { eventId station } }` },
      {
        next: (r) => events.push(r.data?.statusEvents.station ?? `errors: ${JSON.stringify(r.errors)}`),
        error: () => {},
        complete: () => {},
      },
    );
    return { events, client };
  }

  it("degrades live fan-out to each instance while Redis is down and resumes across instances when it is back", async () => {
    const redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    const env = { DATABASE_URL: database.url, REDIS_URL: redis.url, RATE_LIMIT_PER_SECOND: "0" };
    const a = await startApp("postgres", disposers, env);
    const b = await startApp("postgres", disposers, env);
    const onA = watch(a.url);
    await liveSubscriptionsRunning(a.url, 1);
    const ingest = (url: string, station: string) =>
      postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb: "020-12345675", state: "ARR", station, timestamp: new Date().toISOString() },
        admin,
      );

    await until(
      async () => {
        await ingest(b.url, "AMS"); // B → Redis → A
        return onA.events.includes("AMS");
      },
      { what: "cross-instance fan-out through Redis" },
    );

    await redis.stop();
    await until(async () => (await getJson(`${a.url}/readyz`)).body.redis === "down", {
      what: "A notices Redis is down",
    });
    const ready = await getJson(`${a.url}/readyz`);
    expect(ready.status).toBe(200); // degraded, not out of service
    expect((await ingest(a.url, "FRA")).status).toBe(202);
    await until(() => onA.events.includes("FRA"), { what: "in-instance fan-out while Redis is down" });
    expect((await ingest(b.url, "LHR")).status).toBe(202); // stored, but its publish cannot reach A
    // Nothing carries LHR to A with Redis down (A reads the database only for a hole or a resync):
    // A's next own event of that AWB reveals the hole in its stream, A reads LHR from the database
    // and hands both out in order.
    expect(onA.events).not.toContain("LHR");
    expect((await ingest(a.url, "MAD")).status).toBe(202);
    await until(() => onA.events.includes("MAD"), { what: "A's own event after LHR" });
    expect(onA.events.slice(-2)).toEqual(["LHR", "MAD"]);
    // The last event of the AWB lost while Redis is away: no later one will reveal it…
    expect((await ingest(b.url, "CDG")).status).toBe(202);

    await redis.start();
    await until(
      async () =>
        (await getJson(`${a.url}/readyz`)).body.redis === "up" &&
        (await getJson(`${b.url}/readyz`)).body.redis === "up",
      { what: "both see Redis again", timeoutMs: 30_000 },
    );
    // …so A's streams read their heads again when Redis is back, and A's subscriber gets it unasked.
    await until(() => onA.events.includes("CDG"), { what: "the event lost during the outage, after the resync" });
    expect(onA.events.slice(-3)).toEqual(["LHR", "MAD", "CDG"]);
    await until(
      async () => {
        await ingest(b.url, "JFK");
        return onA.events.includes("JFK");
      },
      { what: "cross-instance fan-out resumed" },
    );
    // While healthy, an instance's own events reach its subscribers once (through Redis's echo only).
    const before = onA.events.filter((s) => s === "HKG").length;
    await ingest(a.url, "HKG");
    await ingest(a.url, "SIN");
    // SIN's echo follows HKG's on the one connection: once SIN is in, any second HKG would be too.
    await until(() => onA.events.includes("SIN"), { what: "the event after HKG" });
    expect(onA.events.filter((s) => s === "HKG").length - before).toBe(1);
  }, 120_000);
});
