import { Client } from "pg";
import { STATUS_CODES } from "../src/domain/status";
import { describeBackend, Disposers } from "./support/harness";
import { postJson } from "./support/http";
import { type OidcIssuer, startOidcIssuer } from "./support/oidc-issuer";
import { assertConforms } from "./support/onerecord-conformance";
import { oneRecord } from "./support/onerecord-requests";
import { createPostgresDatabase } from "./support/postgres";
import { spawnServer, type ServerProcess } from "./support/process";
import { type ReceivedPost, startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/**
 * ONE Record notifications under faults, over real processes on a real PostgreSQL: the subscriber's
 * server failing and then gone, the publisher SIGKILLed mid-burst, the token endpoint down. The
 * subscriber is a real HTTP server standing for a forwarder's ONE Record server; it subscribes as an
 * OIDC agent whose Organization URI is on that server, so its notifications go to its /notifications.
 * Whatever happens, every notification the publisher queued arrives, and a repeat carries the
 * Notification-Id and bytes of the first.
 */
const KEY = "cgw_onerecord-fault-admin-key-001";
const auth = { authorization: `Bearer ${KEY}` };
/** The publisher's URIs: fixed, so that a restart on another port names every object alike. */
const BASE_URL = "https://1r.carrier.example/onerecord";
const API = "https://onerecord.iata.org/ns/api#";

function awbFor(i: number): string {
  const serial = String(4_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
}

describeBackend("postgres")("ONE Record notifications under faults (real processes, PostgreSQL)", () => {
  const disposers = new Disposers();
  afterEach(() => disposers.disposeAll());

  interface Setup {
    sql: Client;
    issuer: OidcIssuer;
    start: () => Promise<ServerProcess>;
  }

  async function setup(env: Record<string, string> = {}): Promise<Setup> {
    const issuer = await startOidcIssuer(disposers);
    issuer.addClient("publisher", "publisher-secret");
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    disposers.add(() => sql.end());
    const servers: ServerProcess[] = [];
    disposers.add(async () => {
      for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
      await Promise.all(servers.map((s) => s.exited));
    });
    const serverEnv = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: KEY,
      ALLOW_PRIVATE_CALLBACKS: "true",
      RATE_LIMIT_PER_SECOND: "0",
      DELIVERY_POLL_MS: "100",
      LOG_LEVEL: "info",
      ONE_RECORD_BASE_URL: BASE_URL,
      ONE_RECORD_OIDC_ISSUER: issuer.issuer,
      ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
      ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
      ONE_RECORD_CLIENT_ID: "publisher",
      ONE_RECORD_CLIENT_SECRET: "publisher-secret",
      ...env,
    };
    const start = async () => {
      const server = await spawnServer(serverEnv);
      servers.push(server);
      return server;
    };
    return { sql, issuer, start };
  }

  /**
   * Each AWB gets its first milestone, then the forwarder (an OIDC agent whose Organization is on
   * `server`) subscribes to its Shipment's events through POST /subscriptions.
   */
  async function subscribeAll(
    sql: Client,
    url: string,
    issuer: OidcIssuer,
    server: string,
    awbs: string[],
  ): Promise<void> {
    // The operator registered the forwarder's server (partner:add): notifications go to no other.
    await sql.query(
      "INSERT INTO onerecord_partner (organization, server_url) VALUES ($1, $2) ON CONFLICT (organization) DO NOTHING",
      [`${server}/onerecord/logistics-objects/forwarder`, `${server}/onerecord`],
    );
    const token = await issuer.token({
      logistics_agent_uri: `${server}/onerecord/logistics-objects/forwarder`,
      scope: "events:read",
    });
    for (const awb of awbs) {
      const first = await postJson(`${url}/carrier/handling/shipment/events`, { awb, state: "RCS" }, auth);
      expect(first.status).toBe(202);
      const res = await oneRecord(`${url}/onerecord/subscriptions`, {
        method: "POST",
        token,
        body: {
          "@context": { api: API },
          "@type": "api:Subscription",
          "api:hasSubscriber": { "@id": `${server}/onerecord/logistics-objects/forwarder` },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:hasTopic": {
            "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
            "@value": `${BASE_URL}/logistics-objects/shipment-${awb}`,
          },
          "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
        },
      });
      expect(res.status).toBe(201);
    }
  }

  /** `count` milestones over `awbs`, each with its own eventId, ingested in batches of 500. */
  async function ingestBurst(url: string, awbs: string[], count: number, tag: string): Promise<void> {
    for (let start = 0; start < count; start += 500) {
      const batch = Array.from({ length: Math.min(500, count - start) }, (_, k) => {
        const i = start + k;
        return { eventId: `${tag}-${i}`, awb: awbs[i % awbs.length]!, state: STATUS_CODES[i % STATUS_CODES.length]! };
      });
      const res = await postJson(`${url}/carrier/handling/shipment/events`, batch, auth);
      expect(res.status).toBe(202);
    }
  }

  interface Queued {
    id: string;
    status: string;
    payload: string;
    event_id: string;
  }
  const notifications = async (sql: Client) =>
    (
      await sql.query<Queued>(
        "SELECT id::text, status::text, payload, event_id::text FROM delivery WHERE kind = 'ONE_RECORD'",
      )
    ).rows;
  const idOf = (post: ReceivedPost) => String(post.headers["notification-id"]);

  /**
   * Every notification queued arrived, and every POST received is one of them, byte for byte: a repeat
   * is the same Notification-Id with the same body. Answers how many POSTs were repeats.
   */
  async function expectAllArrived(
    sql: Client,
    posts: readonly ReceivedPost[],
    expected: number,
    awbCount: number,
  ): Promise<number> {
    const queued = await notifications(sql);
    // One per milestone of the burst (each AWB's first milestone came before its subscription).
    expect(queued).toHaveLength(expected);
    expect(new Set(queued.map((d) => d.event_id)).size).toBe(expected);
    const {
      rows: [milestones],
    } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM status_event");
    expect(Number(milestones!.n)).toBe(expected + awbCount);
    const payloadById = new Map(queued.map((d) => [d.id, d.payload]));
    expect(posts.filter((post) => payloadById.get(idOf(post)) !== post.body).map(idOf)).toEqual([]);
    expect(new Set(posts.map(idOf)).size).toBe(expected);
    await until(
      async () =>
        (await sql.query("SELECT 1 FROM delivery WHERE kind = 'ONE_RECORD' AND status <> 'DELIVERED'")).rowCount === 0,
      { what: "every notification recorded as delivered" },
    );
    await assertConforms(JSON.parse(posts[0]!.body) as object);
    return posts.length - expected;
  }

  it("loses nothing while the subscriber's server fails (503) and then is gone: every notification arrives when it is back", async () => {
    const receiver = await startReceiver();
    const port = Number(new URL(receiver.url).port);
    // Retries and catch-up alone: with the circuit breaker on, attempts would pause after ten failures
    // until its probe (test/failing-receivers.test.ts drives that path).
    const { sql, issuer, start } = await setup({
      DELIVERY_RETRY_SCHEDULE: "300ms,600ms,1s,2s,4s,8s",
      DELIVERY_CIRCUIT_FAILURES: "0",
    });
    const server = await start();
    const awbs = Array.from({ length: 5 }, (_, i) => awbFor(i));
    await subscribeAll(sql, server.url, issuer, receiver.url, awbs);

    receiver.setPostStatus(503);
    await ingestBurst(server.url, awbs, 100, "failing");
    await until(() => new Set(receiver.posts.map(idOf)).size === 100, { what: "every notification tried once" });
    await receiver.close();
    await ingestBurst(server.url, awbs, 100, "gone");
    await until(
      async () =>
        (await sql.query("SELECT 1 FROM delivery WHERE kind = 'ONE_RECORD' AND attempt_count >= 2")).rowCount === 200,
      { what: "failed attempts while the subscriber is gone" },
    );
    const { rows: errors } = await sql.query<{ error: string }>("SELECT DISTINCT error FROM delivery_attempt");
    expect(errors.map((e) => e.error).sort()).toEqual(["ECONNREFUSED", "HTTP 503"]);
    expect((await sql.query("SELECT 1 FROM delivery WHERE kind = 'ONE_RECORD' AND status <> 'PENDING'")).rowCount).toBe(
      0,
    );

    const back = await startReceiver(port);
    disposers.add(() => back.close());
    await until(() => new Set(back.posts.map(idOf)).size === 200, { timeoutMs: 30_000, what: "the backlog" });
    // The 503s were tries of the same notifications: the same ids and bytes as what arrived.
    const repeats = await expectAllArrived(sql, [...receiver.posts, ...back.posts], 200, awbs.length);
    expect(back.posts.every((post) => post.path === "/onerecord/notifications")).toBe(true);
    console.log(
      `subscriber down: 200/200 notifications delivered after ${receiver.posts.length} answered 503; ${repeats} POSTs in all beyond one per notification, each repeating its Notification-Id and body`,
    );
  }, 90_000);

  it("loses nothing when the publisher is SIGKILLed mid-burst: every notification arrives after a restart", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { sql, issuer, start } = await setup({ DELIVERY_LEASE_MS: "15000" });
    const first = await start();
    const awbs = Array.from({ length: 10 }, (_, i) => awbFor(100 + i));
    await subscribeAll(sql, first.url, issuer, receiver.url, awbs);

    await ingestBurst(first.url, awbs, 1_000, "burst");
    await until(() => receiver.posts.length >= 100, { what: "notifications in flight" });
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    const atKill = receiver.posts.length;

    await start(); // the restart, on the same database
    await until(() => new Set(receiver.posts.map(idOf)).size === 1_000, {
      timeoutMs: 60_000,
      what: "all 1,000 notifications",
    });
    const repeats = await expectAllArrived(sql, receiver.posts, 1_000, awbs.length);
    console.log(
      `publisher SIGKILL: ${atKill} notifications received before the kill; 1000/1000 delivered after the restart; ${repeats} repeats, each with its Notification-Id and body`,
    );
  }, 120_000);

  it("holds notifications while the token endpoint is down and sends them, authenticated, once it is back", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { sql, issuer, start } = await setup({ DELIVERY_RETRY_SCHEDULE: "300ms,600ms,1s,2s,4s,8s" });
    const server = await start();
    const awbs = Array.from({ length: 5 }, (_, i) => awbFor(200 + i));
    await subscribeAll(sql, server.url, issuer, receiver.url, awbs);

    issuer.setTokenEndpoint("unavailable");
    await ingestBurst(server.url, awbs, 50, "no-token");
    await until(
      async () =>
        (await sql.query("SELECT 1 FROM delivery WHERE kind = 'ONE_RECORD' AND attempt_count >= 2")).rowCount === 50,
      { what: "attempts failed for want of a token" },
    );
    const { rows: errors } = await sql.query<{ error: string }>("SELECT DISTINCT error FROM delivery_attempt");
    expect(errors.map((e) => e.error)).toEqual([expect.stringMatching(/^no access token: .*HTTP 503/)]);
    // Nothing goes out without a token.
    expect(receiver.posts).toHaveLength(0);

    issuer.setTokenEndpoint("ok");
    await until(() => new Set(receiver.posts.map(idOf)).size === 50, {
      timeoutMs: 30_000,
      what: "the held notifications",
    });
    await expectAllArrived(sql, receiver.posts, 50, awbs.length);
    const issued = new Set(issuer.issuedTokens().map((token) => `Bearer ${token}`));
    expect(receiver.posts.filter((post) => !issued.has(String(post.headers.authorization)))).toEqual([]);
  }, 90_000);
});
