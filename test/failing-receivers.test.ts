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
const FAILURES = 3;
/** DELIVERY_PER_ORIGIN's default: sends in flight to one origin at once. */
const PER_ORIGIN = 8;
/** Slack for instants recorded in whole milliseconds, from two clocks (Date and performance.now). */
const MARGIN_MS = 50;

describe.each(BEHAVIOUR_BACKENDS)("failing receivers on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, {
        DELIVERY_CIRCUIT_FAILURES: String(FAILURES),
        DELIVERY_CIRCUIT_OPEN_MS: String(OPEN_MS),
        DELIVERY_PER_ORIGIN: String(PER_ORIGIN),
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
    const scrape = async () => (await fetch(`${url}/metrics`)).text();
    const valueIn = (text: string, line: string) => {
      const found = text.split("\n").find((l) => l.startsWith(`${line} `));
      return found ? Number(found.split(" ").pop()) : 0;
    };
    const metric = async (line: string) => valueIn(await scrape(), line);
    const OPENED = 'gateway_delivery_circuit_changes_total{change="opened"}';
    /** The recorded attempts of the deliveries to `callback`. */
    const attemptsTo = (callback: string) =>
      app.database.prisma.deliveryAttempt.findMany({
        where: { delivery: { callback } },
        orderBy: { startedAt: "asc" },
      });
    const deliveredTo = (callback: string) =>
      app.database.prisma.delivery.count({ where: { callback, status: "DELIVERED" } });

    it("opens an origin's circuit after consecutive failures: nothing more is sent to it while open, other origins go on, a probe resumes it", async () => {
      const failing = await receiverFor();
      const healthy = await receiverFor();
      const awb = "020-80000005";
      const failingCallback = `${failing.url}/ok/circuit`;
      const healthyCallback = `${healthy.url}/ok/circuit`;
      await subscribe(awb, failingCallback);
      await subscribe(awb, healthyCallback);
      // 503 until the test knows when the circuit opened; then a POST arriving after the open period
      // (the probe) is answered 200.
      let answerAfter = Infinity;
      failing.setPostStatus((post) => (post.receivedAt >= answerAfter ? 200 : 503));
      const opened = await metric(OPENED);

      await ingest(Array.from({ length: 10 }, (_, i) => ({ awb, state: "RCS", eventId: `circuit-${backend}-${i}` })));
      let seen = "";
      await until(async () => valueIn((seen = await scrape()), OPENED) === opened + 1, {
        what: "the failing origin's circuit opening",
      });
      // It cannot have closed yet (every POST is answered 503 so far): the same scrape counts it open.
      expect(valueIn(seen, "gateway_delivery_circuits_open")).toBe(1);

      // Every send that had started when it opened is answered and recorded once the recorded attempts
      // equal the POSTs received (a POST is counted before it is answered, an attempt after). The
      // circuit opened as the third failure's answer came back: the third-earliest end of an attempt.
      await until(async () => (await attemptsTo(failingCallback)).length === failing.posts.length, {
        what: "the sends under way at the opening recorded",
      });
      const ends = (await attemptsTo(failingCallback))
        .map((a) => a.startedAt.getTime() + a.durationMs)
        .sort((a, b) => a - b);
      const openedAt = ends[FAILURES - 1]!;
      answerAfter = openedAt + OPEN_MS - MARGIN_MS;

      // It recovers: the probe after the open period succeeds, the circuit closes, the backlog goes out.
      await until(async () => (await metric('gateway_delivery_circuit_changes_total{change="closed"}')) >= 1, {
        what: "the probe closing the circuit",
        timeoutMs: 30_000,
      });
      await until(async () => (await deliveredTo(failingCallback)) === 10, {
        what: "all ten notifications delivered to the recovered receiver",
        timeoutMs: 30_000,
      });

      const attempts = (await attemptsTo(failingCallback)).map((a) => a.startedAt.getTime());
      // Before it opened: at most PER_ORIGIN sends in flight, and only FAILURES - 1 of them answered
      // (and so followed by another) before the answer that opened it.
      const beforeOpening = attempts.filter((t) => t <= openedAt + MARGIN_MS).length;
      expect(beforeOpening).toBeGreaterThanOrEqual(FAILURES);
      expect(beforeOpening).toBeLessThanOrEqual(PER_ORIGIN + FAILURES - 1);
      // While open not one send started, though a retry of each fell due every 200 ms (listed: ms after the opening).
      const afterOpening = attempts.map((t) => t - openedAt);
      expect(afterOpening.filter((ms) => ms > MARGIN_MS && ms < OPEN_MS - MARGIN_MS)).toEqual([]);

      // The other origin went on: each of its ten notifications delivered at its one and only POST.
      await until(async () => (await deliveredTo(healthyCallback)) === 10, { what: "the healthy origin's ten" });
      expect(healthy.posts.length).toBe(10);
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
      // Parked: its pending notification is set aside while disabled, and no claim takes it though due.
      const parked = async () => app.database.prisma.delivery.findFirstOrThrow({ where: { subscriptionId: id } });
      await until(async () => (await parked()).status === "PARKED", { what: "its pending notification parked" });
      const parkedAt = await parked();
      await until(() => Date.now() > parkedAt.nextAttemptAt.getTime(), { what: "the parked notification due" });
      // A control on the same origin, queued after that: its first POST is answered 404 (the origin
      // answers, so its circuit closes if open), and its retry is taken by a claim that had this
      // origin's due deliveries in reach, the parked one among them.
      const control = `${receiver.url}/ok/control`;
      let controlPosts = 0;
      receiver.setPostStatus((post) =>
        post.path.startsWith("/ok/control") ? (++controlPosts === 1 ? 404 : 204) : 500,
      );
      await subscribe("020-80000020", control);
      await ingest({ awb: "020-80000020", state: "RCS", eventId: `disable-control-${backend}` });
      await until(async () => (await deliveredTo(control)) === 1, { what: "the control's retry delivered" });
      expect(controlPosts).toBe(2);
      expect(await parked()).toMatchObject({ status: "PARKED", attemptCount: parkedAt.attemptCount });

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
 * A wrong callback path is one subscription's failure, not its origin's. One
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
