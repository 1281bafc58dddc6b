import type { App } from "../src/app";
import { createDeliveryCountsLoader } from "../src/delivery/delivery.loaders";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, graphql, postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until, verifySignature } from "./support/webhooks";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=";
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

describe.each(BEHAVIOUR_BACKENDS)("milestones and webhooks on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let awbSeq = 1_000_000;
    /** A fresh AWB with a valid check digit for each test. */
    const nextAwb = () => {
      const serial = String(++awbSeq);
      return `176-${serial}${Number(serial) % 7}`;
    };
    const subscribe = async (awb: string, states: string, path = "/ok/hook") => {
      const res = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${receiver.url}${path}`, states },
        admin,
      );
      expect(res.status).toBe(201);
      return res.body.subscriptionId as string;
    };
    const ingest = (body: unknown, headers: Record<string, string> = admin) =>
      postJson(`${url}/carrier/handling/shipment/events`, body, headers);
    const postsFor = (subscriptionId: string) =>
      receiver.posts.filter((p) => JSON.parse(p.body).subscriptionId === subscriptionId);

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, {
        BOOTSTRAP_SIGNING_SECRET: SECRET,
        DELIVERY_RETRY_SCHEDULE: "200ms,200ms,200ms",
        DELIVERY_POLL_MS: "50",
        RATE_LIMIT_PER_SECOND: "0",
      }));
    });
    afterAll(() => disposers.disposeAll());
    afterEach(() => receiver.setPostStatus(204));

    it("stores a matching milestone and POSTs the signed five-field notification", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "DEP,ARR");
      const before = Date.now();
      const res = await ingest({
        awb: awb.replace("-", " "),
        state: "dep",
        timestamp: "2026-11-21T08:00:00+01:00",
        station: "FRA",
        flight: "LH8160",
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        events: [{ eventId: expect.any(String), clientEventId: null, duplicate: false, matchedSubscriptions: 1 }],
        unmapped: [],
        warnings: [],
      });
      await until(() => postsFor(subscriptionId).length === 1, { what: "the notification" });
      const post = postsFor(subscriptionId)[0]!;
      expect(post.path).toBe("/ok/hook");
      expect(post.headers["content-type"]).toBe("application/json");
      const body = JSON.parse(post.body);
      expect(Object.keys(body)).toEqual(["subscriptionId", "AWB", "State", "toaTimestamp", "timestamp"]);
      expect(body).toMatchObject({ subscriptionId, AWB: awb, State: "DEP", toaTimestamp: null });
      expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(body.timestamp)).toBeGreaterThanOrEqual(before - 1000);
      expect(post.headers["webhook-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(Math.abs(Number(post.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
      expect(verifySignature(SECRET, post.headers, post.body)).toBe(true);
      expect(verifySignature("whsec_d3Jvbmcgc2VjcmV0IHdyb25nIHNlY3JldA==", post.headers, post.body)).toBe(false);

      const history = await getJson(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers: admin });
      expect(history.body).toEqual([
        expect.objectContaining({
          eventId: res.body.events[0].eventId,
          awb,
          state: "DEP",
          timestamp: "2026-11-21T07:00:00.000Z",
          station: "FRA",
          flight: "LH8160",
          toaTimestamp: null,
        }),
      ]);
    });

    it("notifies only subscriptions whose states match, * matching all, and sets toaTimestamp for TOA", async () => {
      const awb = nextAwb();
      const dep = await subscribe(awb, "DEP", "/ok/dep");
      const all = await subscribe(awb, "*", "/ok/all");
      const toa = await subscribe(awb, "TOA", "/ok/toa");
      const res = await ingest([
        { awb, state: "ARR" },
        { awb, state: "TOA", toaTimestamp: "2026-11-22T06:30:00Z" },
      ]);
      expect(res.body.events.map((e: { matchedSubscriptions: number }) => e.matchedSubscriptions)).toEqual([1, 2]);
      await until(() => postsFor(all).length === 2 && postsFor(toa).length === 1, { what: "three notifications" });
      expect(postsFor(dep)).toHaveLength(0);
      expect(JSON.parse(postsFor(toa)[0]!.body).toaTimestamp).toBe("2026-11-22T06:30:00.000Z");
    });

    it("stores and notifies nothing new for a repeated eventId, or a repeated (AWB, state, timestamp)", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      const first = await ingest({ eventId: "msg-1", awb, state: "RCS" });
      const again = await ingest({ eventId: "msg-1", awb, state: "RCS" });
      expect(again.body.events[0]).toEqual({
        eventId: first.body.events[0].eventId,
        clientEventId: "msg-1",
        duplicate: true,
        matchedSubscriptions: 0,
      });
      const at = "2026-11-21T10:00:00Z";
      const a = await ingest([
        { awb, state: "MAN", timestamp: at },
        { awb, state: "MAN", timestamp: "2026-11-21T11:00:00+01:00" },
      ]);
      expect(a.body.events.map((e: { duplicate: boolean }) => e.duplicate)).toEqual([false, true]);
      // Two deliveries queued in all, the duplicates none; each sent once, delivered at its first POST.
      const deliveries = (status?: "DELIVERED") =>
        app.database.prisma.delivery.count({ where: { subscriptionId, ...(status ? { status } : {}) } });
      await until(async () => (await deliveries("DELIVERED")) === 2, { what: "two notifications delivered" });
      expect(await deliveries()).toBe(2);
      expect(postsFor(subscriptionId)).toHaveLength(2);
      expect(await app.database.prisma.statusEvent.count({ where: { awb } })).toBe(2);
    });

    it.each([
      ["no AWB", { state: "DEP" }, "awb"],
      ["a malformed AWB", { awb: "176-1", state: "DEP" }, "awb"],
      ["an unknown state", { awb: "176-10000003", state: "XYZ" }, "state"],
      ["* as a state", { awb: "176-10000003", state: "*" }, "state"],
      [
        "a timestamp without offset",
        { awb: "176-10000003", state: "DEP", timestamp: "2026-11-21T10:00:00" },
        "timestamp",
      ],
      [
        "30 February (which JavaScript's Date would move to 2 March)",
        { awb: "176-10000003", state: "DEP", timestamp: "2026-02-30T10:00:00Z" },
        "timestamp",
      ],
      [
        "an offset past ±14:00",
        { awb: "176-10000003", state: "DEP", timestamp: "2026-11-21T10:00:00+15:00" },
        "timestamp",
      ],
      [
        "an instant past 9999 (PostgreSQL refuses its offset: it was a 500)",
        { awb: "176-10000003", state: "DEP", timestamp: "9999-12-31T23:59:00-01:00" },
        "timestamp",
      ],
      ["a year before 1900", { awb: "176-10000003", state: "DEP", timestamp: "1899-12-31T23:00:00Z" }, "timestamp"],
      [
        "toaTimestamp on DEP",
        { awb: "176-10000003", state: "DEP", toaTimestamp: "2026-11-21T10:00:00Z" },
        "toaTimestamp",
      ],
      ["a lower-case station", { awb: "176-10000003", state: "DEP", station: "fra" }, "station"],
      ["a malformed flight", { awb: "176-10000003", state: "DEP", flight: "flight 1" }, "flight"],
      ["an extra field", { awb: "176-10000003", state: "DEP", weight: 12 }, "weight"],
    ])("answers 400 for %s and stores nothing", async (_name, event, field) => {
      const count = await app.database.prisma.statusEvent.count();
      const res = await ingest([{ awb: "176-10000003", state: "RCS" }, event]);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(`[1].${field}`);
      expect(await app.database.prisma.statusEvent.count()).toBe(count);
    });

    it("refuses an empty list, over 1,000 events, and callers without events:write", async () => {
      expect((await ingest([])).status).toBe(400);
      const many = Array.from({ length: 1001 }, () => ({ awb: "176-10000003", state: "DEP" }));
      expect((await ingest(many)).body.errors[0].message).toContain("at most 1000");
      const { clientId } = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions", "events:read"]);
      expect((await ingest({ awb: "176-10000003", state: "DEP" }, { authorization: `Bearer ${key}` })).status).toBe(
        403,
      );
      expect((await ingest({ awb: "176-10000003", state: "DEP" }, {})).status).toBe(401);
    });

    it("lets events:read or subscriptions keys read the history, and no other key", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS" });
      const keyWith = async (scopes: string[]) => {
        const { clientId } = await app.services.clients.createClient({
          name: scopes.join("+"),
          callbackPrefixes: ["*"],
        });
        return { authorization: `Bearer ${(await app.services.clients.issueKey(clientId, scopes)).key}` };
      };
      const read = (headers: Record<string, string>) =>
        getJson(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers });
      expect((await read(await keyWith(["events:read"]))).body).toHaveLength(1);
      expect((await read(await keyWith(["subscriptions"]))).body).toHaveLength(1);
      expect(await read(await keyWith(["events:write"]))).toMatchObject({
        status: 403,
        body: { code: "INSUFFICIENT_SCOPE" },
      });
      expect(await getJson(`${url}/carrier/handling/shipment/events?awb=nope`, { headers: admin })).toMatchObject({
        status: 400,
        body: { errors: [{ field: "awb" }] },
      });
    });

    it("says a malformed AWB on the history reads is malformed, not missing (REST and GraphQL)", async () => {
      const malformed = 'must be a 3-digit prefix and an 8-digit serial, such as 020-12345675, got "020-1234567"';
      for (const route of ["events", "carrier-statuses"]) {
        expect(
          await getJson(`${url}/carrier/handling/shipment/${route}?awb=020-1234567`, { headers: admin }),
        ).toMatchObject({ status: 400, body: { errors: [{ field: "awb", message: malformed }] } });
        expect(await getJson(`${url}/carrier/handling/shipment/${route}`, { headers: admin })).toMatchObject({
          status: 400,
          body: { errors: [{ field: "awb", message: "is required: an AWB such as 020-12345675" }] },
        });
      }
      for (const field of ["milestones", "carrierStatuses"]) {
        const answer = await graphql(url, `{ ${field}(awb: "020-1234567") { __typename } }`, undefined, admin);
        expect(answer.errors![0].extensions).toMatchObject({
          code: "VALIDATION_FAILED",
          errors: [{ field: "awb", message: malformed }],
        });
      }
    });

    it("retries a failing callback with backoff and records every attempt", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      receiver.setPostStatus(500);
      await ingest({ awb, state: "RCF" });
      await until(() => postsFor(subscriptionId).length >= 2, { what: "a retry" });
      receiver.setPostStatus(204);
      await until(
        async () =>
          (await app.database.prisma.delivery.count({ where: { subscriptionId, status: "DELIVERED" } })) === 1,
        { what: "delivery" },
      );
      const posts = postsFor(subscriptionId);
      expect(new Set(posts.map((p) => p.headers["webhook-id"])).size).toBe(1);
      expect(posts[1]!.receivedAt - posts[0]!.receivedAt).toBeGreaterThanOrEqual(150);
      const deliveries = await getJson(`${url}/carrier/handling/shipment/subscribe/${subscriptionId}/deliveries`, {
        headers: admin,
      });
      expect(deliveries.body[0]).toMatchObject({ status: "DELIVERED", attemptCount: posts.length });
      expect(deliveries.body[0].attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([
        ...Array(posts.length - 1).fill(500),
        204,
      ]);
    });

    it("stops at once on 410 Gone, and a dead delivery can be redelivered with the same webhook-id", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      receiver.setPostStatus(410);
      await ingest({ awb, state: "NFD" });
      await until(
        async () => (await app.database.prisma.delivery.count({ where: { subscriptionId, status: "DEAD" } })) === 1,
        { what: "a dead delivery" },
      );
      // Dead at its first attempt, so no claim takes it again: one POST in all.
      expect(await app.database.prisma.delivery.findFirstOrThrow({ where: { subscriptionId } })).toMatchObject({
        attemptCount: 1,
      });
      expect(postsFor(subscriptionId)).toHaveLength(1);
      receiver.setPostStatus(204);
      const [dead] = (
        await getJson(`${url}/carrier/handling/shipment/subscribe/${subscriptionId}/deliveries?status=DEAD`, {
          headers: admin,
        })
      ).body;
      const redo = await postJson(
        `${url}/carrier/handling/shipment/deliveries/${dead.deliveryId}/redeliver`,
        {},
        admin,
      );
      expect(redo).toMatchObject({ status: 200, body: { status: "PENDING" } });
      await until(() => postsFor(subscriptionId).length === 2, { what: "the redelivery" });
      expect(postsFor(subscriptionId)[1]!.headers["webhook-id"]).toBe(dead.deliveryId);
    });

    it("marks a delivery dead after the schedule, and redelivers every dead one of a subscription", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      receiver.setPostStatus(503);
      await ingest([
        { awb, state: "DLV" },
        { awb, state: "RCT" },
      ]);
      await until(
        async () => (await app.database.prisma.delivery.count({ where: { subscriptionId, status: "DEAD" } })) === 2,
        { what: "two dead deliveries" },
      );
      expect(postsFor(subscriptionId)).toHaveLength(8); // 1 attempt + 3 retries, each
      receiver.setPostStatus(204);
      const future = await postJson(
        `${url}/carrier/handling/shipment/subscribe/${subscriptionId}/redeliver?from=2100-01-01T00:00:00Z`,
        {},
        admin,
      );
      expect(future.body).toEqual({ requeued: 0 });
      const all = await postJson(`${url}/carrier/handling/shipment/subscribe/${subscriptionId}/redeliver`, {}, admin);
      expect(all.body).toEqual({ requeued: 2 });
      await until(
        async () =>
          (await app.database.prisma.delivery.count({ where: { subscriptionId, status: "DELIVERED" } })) === 2,
        { what: "redelivery" },
      );
    });

    it("honours Retry-After", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      receiver.setPostStatus(503, { "retry-after": "1" });
      await ingest({ awb, state: "TFD" });
      await until(() => postsFor(subscriptionId).length === 1, { what: "the first attempt" });
      receiver.setPostStatus(204);
      await until(() => postsFor(subscriptionId).length === 2, { what: "the retry" });
      const [first, second] = postsFor(subscriptionId);
      expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
    });

    it("shows deliveries and redelivery only to the owning client", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "*");
      await ingest({ awb, state: "DDL" });
      const { clientId } = await app.services.clients.createClient({ name: "other", callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      const other = { authorization: `Bearer ${key}` };
      expect(
        (await getJson(`${url}/carrier/handling/shipment/subscribe/${subscriptionId}/deliveries`, { headers: other }))
          .status,
      ).toBe(404);
      expect(
        (await postJson(`${url}/carrier/handling/shipment/subscribe/${subscriptionId}/redeliver`, {}, other)).status,
      ).toBe(404);
      await until(async () => (await app.database.prisma.delivery.count({ where: { subscriptionId } })) === 1);
      const delivery = await app.database.prisma.delivery.findFirstOrThrow({ where: { subscriptionId } });
      expect(
        (await postJson(`${url}/carrier/handling/shipment/deliveries/${delivery.id}/redeliver`, {}, other)).body.code,
      ).toBe("DELIVERY_NOT_FOUND");
    });

    it("does the same through GraphQL: recordStatusEvents, milestones, deliveries", async () => {
      const awb = nextAwb();
      const subscriptionId = await subscribe(awb, "ARR");
      const recorded = await graphql(
        url,
        `
          mutation ($e: [StatusEventInput!]!) {
            recordStatusEvents(events: $e) {
              eventId
              duplicate
              matchedSubscriptions
            }
          }
        `,
        {
          e: [
            { awb, state: "ARR", station: "JFK" },
            { awb, state: "RCF" },
          ],
        },
        admin,
      );
      expect(recorded.errors).toBeUndefined();
      expect(
        recorded.data.recordStatusEvents.map((r: { matchedSubscriptions: number }) => r.matchedSubscriptions),
      ).toEqual([1, 0]);
      await until(() => postsFor(subscriptionId).length === 1);
      const read = await graphql(
        url,
        `
          query ($a: String!, $s: ID!) {
            milestones(awb: $a) {
              awb
              state
              station
            }
            deliveries(subscriptionId: $s) {
              status
              attempts {
                statusCode
              }
            }
          }
        `,
        { a: awb, s: subscriptionId },
        admin,
      );
      expect(read.data.milestones).toEqual([
        { awb, state: "ARR", station: "JFK" },
        { awb, state: "RCF", station: null },
      ]);
      await until(
        async () =>
          (
            await graphql(
              url,
              `
                query ($s: ID!) {
                  deliveries(subscriptionId: $s) {
                    status
                  }
                }
              `,
              { s: subscriptionId },
              admin,
            )
          ).data.deliveries[0].status === "DELIVERED",
      );
      const bad = await graphql(
        url,
        `
          mutation {
            recordStatusEvents(events: [{ awb: "1", state: DEP }]) {
              eventId
            }
          }
        `,
        undefined,
        admin,
      );
      expect(bad.errors![0].extensions).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ field: "[0].awb" }] });
    });

    it("gives delivery counts per subscription in a list, with one grouped query for the whole list", async () => {
      const awb = nextAwb();
      const ids = [
        await subscribe(awb, "*", "/ok/c1"),
        await subscribe(awb, "*", "/ok/c2"),
        await subscribe(awb, "DEP", "/ok/c3"),
      ];
      await ingest([
        { awb, state: "DEP" },
        { awb, state: "ARR" },
      ]);
      await until(
        async () =>
          (await app.database.prisma.delivery.count({
            where: { subscriptionId: { in: ids }, status: "DELIVERED" },
          })) === 5,
        { what: "five deliveries" },
      );
      const listed = await graphql(
        url,
        `
          query ($a: String!) {
            subscriptions(awb: $a) {
              items {
                subscriptionId
                deliveryCounts {
                  pending
                  delivered
                  dead
                }
              }
            }
          }
        `,
        { a: awb },
        admin,
      );
      expect(listed.errors).toBeUndefined();
      expect(listed.data.subscriptions.items.map((s: { deliveryCounts: unknown }) => s.deliveryCounts)).toEqual([
        { pending: 0, delivered: 2, dead: 0 },
        { pending: 0, delivered: 2, dead: 0 },
        { pending: 0, delivered: 1, dead: 0 },
      ]);
      // The loader over a client that counts its grouped queries: three subscriptions, one query.
      let grouped = 0;
      const counting = app.database.prisma.$extends({
        query: {
          delivery: {
            async groupBy({ args, query }) {
              grouped++;
              return query(args);
            },
          },
        },
      });
      const loader = createDeliveryCountsLoader(
        counting as unknown as Parameters<typeof createDeliveryCountsLoader>[0],
      );
      const counts = await Promise.all(ids.map((id) => loader.load(id)));
      expect(counts.map((c) => c.delivered)).toEqual([2, 2, 1]);
      expect(grouped).toBe(1);
    });

    it("exposes Prometheus metrics for deliveries and the queue", async () => {
      const res = await fetch(`${url}/metrics`);
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(text).toMatch(/gateway_deliveries_total\{outcome="delivered",kind="webhook"\} \d+/);
      expect(text).toMatch(/gateway_delivery_queue_depth \d+/);
      expect(text).toMatch(/gateway_delivery_oldest_due_age_seconds \d/);
      expect(text).toMatch(/gateway_event_to_delivery_seconds_bucket/);
      expect(text).toMatch(/gateway_events_ingested_total \d+/);
    });
  });
});
