/**
 * Failing receivers over the real server and real callback receivers: a per-origin circuit breaker
 * stops sending to an origin that keeps failing (others go on), probes it and resumes; a subscription
 * whose every attempt has failed for DELIVERY_DISABLE_AFTER_HOURS is disabled (its owner sees it, the
 * operator's metric counts it), matches nothing and sends nothing until its owner enables it again.
 */
import type { App } from "../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

const SHIPMENT = "/carrier/handling/shipment";
const OPEN_MS = 3_000;

describe.each(BEHAVIOUR_BACKENDS)("failing receivers on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, {
        DELIVERY_CIRCUIT_FAILURES: "3",
        DELIVERY_CIRCUIT_OPEN_MS: String(OPEN_MS),
        DELIVERY_RETRY_SCHEDULE:
          "200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms",
        DELIVERY_DISABLE_AFTER_HOURS: "1",
        DELIVERY_POLL_MS: "50",
      }));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const receiverFor = async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      return receiver;
    };
    const subscribe = async (awb: string, callback: string) => {
      const answer = await fetch(`${url}${SHIPMENT}/subscribe`, {
        method: "POST",
        headers,
        body: JSON.stringify({ awb, callback, states: "*" }),
      });
      expect(answer.status).toBe(201);
      return ((await answer.json()) as { subscriptionId: string }).subscriptionId;
    };
    const ingest = async (events: unknown) => {
      const answer = await fetch(`${url}${SHIPMENT}/events`, { method: "POST", headers, body: JSON.stringify(events) });
      expect(answer.status).toBe(202);
      return ((await answer.json()) as { events: Array<{ matchedSubscriptions: number }> }).events;
    };
    const metric = async (line: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const found = text.split("\n").find((l) => l.startsWith(`${line} `));
      return found ? Number(found.split(" ").pop()) : 0;
    };

    it("opens an origin's circuit after consecutive failures: nothing more is sent to it while open, other origins go on, a probe resumes it", async () => {
      const failing = await receiverFor();
      const healthy = await receiverFor();
      const awb = "020-80000005";
      await subscribe(awb, `${failing.url}/ok/circuit`);
      await subscribe(awb, `${healthy.url}/ok/circuit`);
      failing.setPostStatus(503);
      const opened = await metric('gateway_delivery_circuit_changes_total{change="opened"}');

      await ingest(Array.from({ length: 10 }, (_, i) => ({ awb, state: "RCS", eventId: `circuit-${backend}-${i}` })));
      await until(
        async () => (await metric('gateway_delivery_circuit_changes_total{change="opened"}')) === opened + 1,
        {
          what: "the failing origin's circuit opening",
        },
      );
      // Sends already under way when it opened still land; then, for the rest of the 3 s, not one
      // reaches the failing receiver, though retries are due every 200 ms.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sentWhenOpened = failing.posts.length;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(failing.posts.length).toBe(sentWhenOpened);
      expect(healthy.posts.length).toBe(10);
      expect(sentWhenOpened).toBeLessThan(10 + 3); // without the breaker: every due retry, every 200 ms
      expect(await metric("gateway_delivery_circuits_open")).toBe(1);

      // It recovers: the probe after the open period succeeds, the circuit closes, the backlog goes out.
      failing.setPostStatus(200);
      await until(async () => (await metric('gateway_delivery_circuit_changes_total{change="closed"}')) >= 1, {
        what: "the probe closing the circuit",
        timeoutMs: 30_000,
      });
      await until(
        async () =>
          (await app.database.prisma.delivery.count({
            where: { callback: `${failing.url}/ok/circuit`, status: "DELIVERED" },
          })) === 10,
        { what: "all ten notifications delivered to the recovered receiver", timeoutMs: 30_000 },
      );
    }, 90_000);

    it("disables a subscription whose every attempt has failed for the period, until its owner enables it again", async () => {
      const receiver = await receiverFor();
      const awb = "020-80000016";
      const id = await subscribe(awb, `${receiver.url}/ok/disable`);
      receiver.setPostStatus(500);
      const disabledBefore = await metric('gateway_subscriptions_disabled_total{kind="webhook"}');
      await ingest({ awb, state: "RCS", eventId: `disable-${backend}-1` });
      const sql = (query: string, ...values: unknown[]) => app.database.prisma.$executeRawUnsafe(query, ...values);
      const failingSince = async () =>
        (await app.database.prisma.subscription.findUniqueOrThrow({ where: { id } })).failingSince;
      await until(async () => (await failingSince()) !== null, { what: "the first failure starting the clock" });
      // Two hours of failures, as far as the clock knows; the next failed retry disables it.
      await sql(`UPDATE subscription SET failing_since = now() - interval '2 hours' WHERE id = $1::uuid`, id);
      await until(
        async () => (await metric('gateway_subscriptions_disabled_total{kind="webhook"}')) === disabledBefore + 1,
        {
          what: "the subscription disabled",
        },
      );

      const read = async () =>
        (await (await fetch(`${url}${SHIPMENT}/subscribe/${id}`, { headers })).json()) as {
          disabledAt: string | null;
          disabledReason: string | null;
        };
      const seen = await read();
      expect(seen.disabledAt).not.toBeNull();
      expect(seen.disabledReason).toMatch(/^every delivery attempt failed since \d{4}-/);
      expect((await ingest({ awb, state: "MAN", eventId: `disable-${backend}-2` }))[0]!.matchedSubscriptions).toBe(0);
      // Parked: its pending notification is not attempted again while disabled.
      const attempts = async () =>
        (await app.database.prisma.delivery.findFirstOrThrow({ where: { subscriptionId: id } })).attemptCount;
      const parkedAt = await attempts();
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // five retry periods
      expect(await attempts()).toBe(parkedAt);

      // Its owner enables it again: it matches, and the parked notification is delivered.
      receiver.setPostStatus(200);
      const enabled = await fetch(`${url}${SHIPMENT}/subscribe/${id}/enable`, { method: "POST", headers });
      expect(enabled.status).toBe(200);
      expect(await enabled.json()).toMatchObject({ disabledAt: null, disabledReason: null });
      await until(
        async () =>
          (await app.database.prisma.delivery.findFirstOrThrow({ where: { subscriptionId: id } })).status ===
          "DELIVERED",
        { what: "the parked notification delivered" },
      );
      expect((await ingest({ awb, state: "DEP", eventId: `disable-${backend}-3` }))[0]!.matchedSubscriptions).toBe(1);
      expect(
        (
          await fetch(`${url}${SHIPMENT}/subscribe/00000000-0000-4000-8000-000000000000/enable`, {
            method: "POST",
            headers,
          })
        ).status,
      ).toBe(404);
    }, 60_000);
  });
});

/**
 * Issue 23, item 4: a wrong callback path is one subscription's failure, not its origin's. One
 * subscription whose path answers 404 shares an origin with a healthy one; the circuit (three
 * failures, then closed for ten minutes) must not open, so the healthy path keeps receiving.
 */
describe.each(BEHAVIOUR_BACKENDS)("a wrong callback path on a shared origin, on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    let url: string;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

    beforeAll(async () => {
      ({ url } = await startApp(backend, disposers, {
        DELIVERY_CIRCUIT_FAILURES: "3",
        DELIVERY_CIRCUIT_OPEN_MS: "600000",
        DELIVERY_RETRY_SCHEDULE: "100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms",
        DELIVERY_POLL_MS: "50",
      }));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const metric = async (line: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const found = text.split("\n").find((l) => l.startsWith(`${line} `));
      return found ? Number(found.split(" ").pop()) : 0;
    };
    const send = async (path: string, body: unknown) => {
      const answer = await fetch(`${url}${SHIPMENT}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      expect(answer.status).toBeLessThan(300);
    };

    it("keeps the origin's circuit closed through 404s from one path, and the healthy path on it receives", async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      await send("/subscribe", { awb: "020-80000023", callback: `${receiver.url}/ok/missing/hook`, states: "*" });
      await send("/subscribe", { awb: "020-80000034", callback: `${receiver.url}/ok/right`, states: "*" });
      const toPath = (prefix: string) => receiver.posts.filter((p) => p.path.startsWith(prefix)).length;

      await send("/events", { awb: "020-80000023", state: "RCS", eventId: `wrong-path-${backend}` });
      // More 404s than the circuit's threshold: with 404 counted against the origin, the fourth
      // attempt would wait out the ten minutes.
      await until(() => toPath("/ok/missing") >= 5, { what: "five attempts to the wrong path" });
      await send("/events", { awb: "020-80000034", state: "RCS", eventId: `right-path-${backend}` });
      await until(() => toPath("/ok/right") === 1, { what: "the healthy path's notification" });
      expect(await metric('gateway_delivery_circuit_changes_total{change="opened"}')).toBe(0);
      expect(await metric("gateway_delivery_circuits_open")).toBe(0);
    }, 60_000);
  });
});
