import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { createDeliveryStore, queueDeliveries } from "../src/delivery/delivery.store";
import { readPartner } from "../src/onerecord/sql/partner-read.sql";
import { insertSubscriptionRequest } from "../src/onerecord/sql/subscription-request-insert.sql";
import { lockSubscriber } from "../src/onerecord/sql/subscription-request-lock.sql";
import { lockRequester } from "../src/onerecord/sql/requester-lock.sql";
import { readSubscriptionRequest } from "../src/onerecord/sql/subscription-request-read.sql";
import { decideSubscriptionRequest } from "../src/onerecord/sql/subscription-request-decide.sql";
import { subscriptionRequestRefusal } from "../src/onerecord/sql/subscription-request-refusal.sql";
import { acceptedThirdPartyEndpoint } from "../src/onerecord/sql/third-party-endpoint.sql";
import { revokeSubscriptionRequest } from "../src/onerecord/sql/subscription-request-revoke.sql";
import { subscriptionsMatchingAwb } from "../src/onerecord/sql/subscriptions-matching-awb.sql";
import { classesOf } from "../src/onerecord/notifications-out/classes";
import { createSubscriptionStore } from "../src/onerecord/subscriptions/subscriptions.store";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { fixtures, openTestDatabase } from "./support/test-database";

/** The SubscriptionRequest and partner statements (src/onerecord/sql/subscription-request-*, partner-read), on both databases. */
describe.each(BACKENDS)("ONE Record subscription statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    const ENDPOINT = "http://subscriber.test/notifications";
    const request = (fields: Partial<Parameters<typeof insertSubscriptionRequest.rows>[1]> = {}) => ({
      id: randomUUID(),
      status: "REQUEST_ACCEPTED",
      initiatedBy: "SUBSCRIBER",
      requestedBy: "organization-x",
      decidedBy: "organization-carrier",
      reason: null,
      errorStatus: null,
      subscription: JSON.stringify({
        "@id": "internal:s",
        "@type": ["https://onerecord.iata.org/ns/api#Subscription"],
      }),
      subscriber: `https://1r.forwarder.example/logistics-objects/${randomUUID()}`,
      topicType: "LOGISTICS_OBJECT_IDENTIFIER",
      // Each its own topic unless given: one live subscription per subscriber, topic type and topic.
      topic: `shipment-${randomUUID()}`,
      awb: "020-12345675",
      eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      expiresAt: null,
      sendBody: false,
      notifyStatusChange: false,
      endpoint: ENDPOINT,
      origin: "http://subscriber.test:80",
      clientId: null,
      agentScopes: null,
      defaultCap: 10,
      typeCap: 20,
      rejectedCap: 100,
      pendingCap: 100,
      ...fields,
    });
    /** Inserts a request: the row stored, or undefined when a cap or the one-live rule refused it. */
    const insert = async (fields: Partial<Parameters<typeof insertSubscriptionRequest.rows>[1]> = {}) =>
      (await insertSubscriptionRequest.rows(db.prisma, request(fields)))[0];
    /** Inserts a request and asserts it was stored as asked (under its own id, with its status): the row. */
    const stored = async (fields: Partial<Parameters<typeof insertSubscriptionRequest.rows>[1]> = {}) => {
      const asked = request(fields);
      const [row] = await insertSubscriptionRequest.rows(db.prisma, asked);
      expect(row).toMatchObject({
        id: asked.id,
        status: asked.status,
        subscriber: asked.subscriber,
        topic: asked.topic,
      });
      return row!;
    };
    /** A pending ONE Record delivery of the subscription, queued as the producers queue them. */
    const queued = async (subscriptionId: string, status: "PENDING" | "PARKED" | "DELIVERED" = "PENDING") => {
      const id = randomUUID();
      await queueDeliveries(
        db.prisma,
        [
          {
            id,
            kind: "ONE_RECORD",
            leased: false,
            eventId: null,
            subscriptionId: null,
            oneRecordSubscriptionId: subscriptionId,
            clientId: null,
            callback: ENDPOINT,
            origin: `http://${randomUUID()}.test:80`,
            payload: '{"@type":"api:Notification"}',
          },
        ],
        { token: randomUUID(), ms: 0 },
        null,
      );
      if (status !== "PENDING") await db.prisma.delivery.update({ where: { id }, data: { status } });
      return id;
    };
    const waitingOnAdvisoryLock = async () =>
      (
        await db.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
          [],
        )
      )[0]!.n > 0;
    const deliveryOf = (id: string) => db.prisma.delivery.findUniqueOrThrow({ where: { id } });

    it("insert writes a request decided on arrival, and read answers it as written", async () => {
      const expiresAt = new Date(Date.now() + 3_600_000);
      const row = await insert({
        topic: "shipment-020-12345675",
        expiresAt,
        sendBody: true,
        eventTypes: ["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED"],
      });
      expect(row).toMatchObject({
        status: "REQUEST_ACCEPTED",
        initiated_by: "SUBSCRIBER",
        decided_by: "organization-carrier",
        topic: "shipment-020-12345675",
        awb: "020-12345675",
        event_types: ["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED"],
        send_body: true,
        notify_status_change: false,
        endpoint: ENDPOINT,
        client_id: null,
        subscription: { "@id": "internal:s" },
      });
      expect(row!.decided_at).toEqual(row!.requested_at);
      expect(row!.expires_at).toEqual(expiresAt);
      expect(await readSubscriptionRequest.rows(db.prisma, { id: row!.id })).toEqual([row]);
      expect(await readSubscriptionRequest.rows(db.prisma, { id: randomUUID() })).toEqual([]);
      // An API key's request keeps no scopes; an agent's keeps its token's.
      const agent = await stored({ agentScopes: ["events:read", "subscriptions"] });
      const scopesOf = async (id: string) =>
        (await db.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } })).agentScopes;
      expect(await scopesOf(agent.id)).toEqual(["events:read", "subscriptions"]);
      expect(
        await db.sql.query("SELECT agent_scopes FROM onerecord_subscription WHERE id = $1::uuid", [row!.id]),
      ).toEqual([{ agent_scopes: null }]);
    });

    /** A third party's request, waiting for the holder. */
    const pending = (fields: Partial<Parameters<typeof insertSubscriptionRequest.rows>[1]> = {}) =>
      stored({ status: "REQUEST_PENDING", decidedBy: null, ...fields });
    const decide = async (
      id: string,
      status: "REQUEST_ACCEPTED" | "REQUEST_REJECTED",
      caps: { thirdPartyCap?: number } = {},
    ) =>
      (
        await decideSubscriptionRequest.rows(db.prisma, {
          id,
          status,
          decidedBy: "organization-holder",
          reason: status === "REQUEST_REJECTED" ? "not for them" : null,
          errorStatus: status === "REQUEST_REJECTED" ? 403 : null,
          thirdPartyCap: caps.thirdPartyCap ?? 1_000,
        })
      )[0];

    it("insert keeps a third party's request pending, undecided, at most pendingCap of one requester at once", async () => {
      const requestedBy = `organization-${randomUUID()}`;
      const first = await pending({ requestedBy, pendingCap: 2 });
      expect(first).toMatchObject({ decided_at: null, decided_by: null, accepted_at: null });
      await pending({ requestedBy, pendingCap: 2 });
      expect(await insert({ requestedBy, pendingCap: 2, status: "REQUEST_PENDING", decidedBy: null })).toBeUndefined();
      const [refusal] = await subscriptionRequestRefusal.rows(db.prisma, {
        subscriber: first.subscriber,
        requestedBy,
        topicType: first.topic_type,
        topic: first.topic,
      });
      expect(refusal).toMatchObject({ pending: 2 });
      // Decided, it waits no more: a place is free.
      expect(await decide(first.id, "REQUEST_REJECTED")).toMatchObject({ status: "REQUEST_REJECTED" });
      await pending({ requestedBy, pendingCap: 2 });
    });

    it("decide accepts a pending request within the subscriber's live bounds, noting who and when; rejects with the reason; decides once", async () => {
      const subscriber = `https://1r.customer.example/logistics-objects/${randomUUID()}`;
      const topic = `shipment-${randomUUID()}`;
      const a = await pending({ subscriber, topic });
      const b = await pending({ subscriber, topic });
      const c = await pending({ subscriber });
      const accepted = await decide(a.id, "REQUEST_ACCEPTED");
      expect(accepted).toMatchObject({ status: "REQUEST_ACCEPTED", decided_by: "organization-holder" });
      expect(accepted!.accepted_at).toBeInstanceOf(Date);
      expect(accepted!.accepted_by).toBe("organization-holder");
      // A second live subscription to the same topic is not taken.
      expect(await decide(b.id, "REQUEST_ACCEPTED")).toBeUndefined();
      // Others' requests on its behalf do not use up the subscriber's own room: its own is still taken
      // under a cap of one, and then no more of its own.
      expect(await decide(c.id, "REQUEST_ACCEPTED")).toMatchObject({ status: "REQUEST_ACCEPTED" });
      await stored({ subscriber, requestedBy: subscriber, defaultCap: 1 });
      expect(await insert({ subscriber, requestedBy: subscriber, defaultCap: 1 })).toBeUndefined();
      expect((await readSubscriptionRequest.rows(db.prisma, { id: b.id }))[0]).toMatchObject({
        status: "REQUEST_PENDING",
      });
      expect(await decide(b.id, "REQUEST_REJECTED")).toMatchObject({
        status: "REQUEST_REJECTED",
        reason: "not for them",
        error_status: 403,
        accepted_at: null,
      });
      expect(await decide(a.id, "REQUEST_REJECTED")).toBeUndefined();
      expect(await decide(b.id, "REQUEST_ACCEPTED")).toBeUndefined();
    });

    it("decide accepts at most thirdPartyCap live third parties' subscriptions of one requester; a revoked one frees a place", async () => {
      const requestedBy = `organization-${randomUUID()}`;
      const third = () => pending({ requestedBy, subscriber: `https://1r.${randomUUID()}.example/o` });
      const [a, b, c] = [await third(), await third(), await third()];
      expect(await decide(a.id, "REQUEST_ACCEPTED", { thirdPartyCap: 2 })).toMatchObject({
        status: "REQUEST_ACCEPTED",
      });
      expect(await decide(b.id, "REQUEST_ACCEPTED", { thirdPartyCap: 2 })).toMatchObject({
        status: "REQUEST_ACCEPTED",
      });
      expect(await decide(c.id, "REQUEST_ACCEPTED", { thirdPartyCap: 2 })).toBeUndefined();
      expect((await refusalOf(request({ requestedBy })))[0]).toMatchObject({ third_parties: 2 });
      await revokeSubscriptionRequest.rows(db.prisma, { id: a.id, revokedBy: requestedBy });
      expect(await decide(c.id, "REQUEST_ACCEPTED", { thirdPartyCap: 2 })).toMatchObject({
        status: "REQUEST_ACCEPTED",
      });
    });

    it("third-party-endpoint: only the endpoint of another server's Organization whose live subscription the holder accepted", async () => {
      const endpoint = `https://1r.${randomUUID()}.example/notifications`;
      const subscriber = endpoint.replace("/notifications", "/logistics-objects/organization-customer");
      const accepted = async () => (await acceptedThirdPartyEndpoint.rows(db.prisma, { endpoint }))[0]!.accepted;
      const request = await pending({ subscriber, endpoint });
      expect(await accepted()).toBe(false);
      // Accepted on arrival (its own subscriber asked): no holder accepted it for a third party.
      await stored({ subscriber, endpoint });
      expect(await accepted()).toBe(false);
      await decide(request.id, "REQUEST_ACCEPTED");
      expect(await accepted()).toBe(true);
      await revokeSubscriptionRequest.rows(db.prisma, { id: request.id, revokedBy: subscriber });
      expect(await accepted()).toBe(false);
      // An Organization of this server (a local id) is never sent to as an unregistered server.
      const local = await pending({ subscriber: `organization-${randomUUID()}`, endpoint });
      await decide(local.id, "REQUEST_ACCEPTED");
      expect(await accepted()).toBe(false);
    });

    it("insert takes an accepted request only under the cap of live ones; rejected ones, revoked and expired ones do not count", async () => {
      const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      await stored({ subscriber, defaultCap: 2 });
      const expired = await stored({ subscriber, defaultCap: 2 });
      await db.prisma.oneRecordSubscription.update({
        where: { id: expired.id },
        data: { expiresAt: new Date(Date.now() - 1_000) },
      });
      const revoked = await stored({ subscriber, defaultCap: 2 });
      await revokeSubscriptionRequest.rows(db.prisma, { id: revoked.id, revokedBy: subscriber });
      await stored({ subscriber, defaultCap: 2 });
      // Two live: the cap.
      expect(await insert({ subscriber, defaultCap: 2 })).toBeUndefined();
      const rejected = await insert({
        subscriber,
        defaultCap: 2,
        status: "REQUEST_REJECTED",
        reason: "no",
        errorStatus: 403,
      });
      expect(rejected).toMatchObject({ status: "REQUEST_REJECTED", reason: "no", error_status: 403 });
      expect(await db.prisma.oneRecordSubscription.count({ where: { subscriber } })).toBe(5);
    });

    const refusalOf = (fields: Parameters<typeof insertSubscriptionRequest.rows>[1]) =>
      subscriptionRequestRefusal.rows(db.prisma, {
        subscriber: fields.subscriber,
        requestedBy: fields.requestedBy,
        topicType: fields.topicType,
        topic: fields.topic,
      });

    it("insert takes one live subscription per subscriber, topic type and topic; refusal names the standing one", async () => {
      const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      const same = { subscriber, requestedBy: subscriber, topic: `shipment-${randomUUID()}` };
      const first = await stored(same);
      // Other event types or body choices make no second one: revoke and subscribe anew to change it.
      expect(await insert({ ...same, eventTypes: ["LOGISTICS_OBJECT_UPDATED"], sendBody: true })).toBeUndefined();
      expect(await refusalOf(request(same))).toEqual([
        { existing: first.id, live: 1, live_types: 0, rejected_recently: 0, pending: 0, third_parties: 0 },
      ]);
      // Another subscriber, or another topic, or the same IRI as a type topic: each its own.
      await stored({ topic: same.topic });
      await stored({ subscriber, topic: `shipment-${randomUUID()}` });
      // A disabled one still stands (the operator enables it again).
      await db.prisma.oneRecordSubscription.update({ where: { id: first.id }, data: { disabledAt: new Date() } });
      expect(await insert(same)).toBeUndefined();
      // Revoked or expired, it no longer does.
      await revokeSubscriptionRequest.rows(db.prisma, { id: first.id, revokedBy: subscriber });
      const second = await stored(same);
      await db.prisma.oneRecordSubscription.update({
        where: { id: second.id },
        data: { expiresAt: new Date(Date.now() - 1_000) },
      });
      await stored(same);
      // A rejected one is no live one: rejections beside an accepted one are stored.
      await stored({ ...same, status: "REQUEST_REJECTED", reason: "no", errorStatus: 403 });
    });

    it("insert takes at most typeCap live type subscriptions per subscriber; identifier ones beside them", async () => {
      const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      const type = (topic: string) => ({
        subscriber,
        requestedBy: subscriber,
        topicType: "LOGISTICS_OBJECT_TYPE",
        topic,
        awb: null,
        typeCap: 2,
      });
      await stored(type("https://onerecord.iata.org/ns/cargo#Shipment"));
      await stored(type("https://onerecord.iata.org/ns/cargo#Waybill"));
      expect(await insert(type("https://onerecord.iata.org/ns/cargo#Piece"))).toBeUndefined();
      expect((await refusalOf(request(type("https://onerecord.iata.org/ns/cargo#Piece"))))[0]).toMatchObject({
        existing: null,
        live_types: 2,
      });
      await stored({ subscriber, requestedBy: subscriber, typeCap: 2 });
    });

    it("insert stores at most rejectedCap rejected requests of one requester in 24 hours; older ones do not count", async () => {
      const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      const rejected = {
        subscriber,
        requestedBy: subscriber,
        status: "REQUEST_REJECTED",
        reason: "no",
        errorStatus: 403,
        rejectedCap: 2,
      };
      const old = await stored(rejected);
      await stored(rejected);
      expect(await insert(rejected)).toBeUndefined();
      expect((await refusalOf(request(rejected)))[0]).toMatchObject({ rejected_recently: 2 });
      await db.prisma.oneRecordSubscription.update({
        where: { id: old.id },
        data: { requestedAt: new Date(Date.now() - 25 * 3_600_000) },
      });
      await stored(rejected);
      // Accepted ones are not held back by rejections.
      await stored({ subscriber, requestedBy: subscriber });
    });

    it("a milestone of an AWB matches at most typeCap + 1 subscriptions of one subscriber, however often it asks", async () => {
      const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      const shipment = `shipment-${randomUUID()}`;
      const CARGO = "https://onerecord.iata.org/ns/cargo#";
      const asks = [
        ...Array.from({ length: 30 }, () => ({ topicType: "LOGISTICS_OBJECT_TYPE", topic: `${CARGO}LogisticsObject` })),
        ...Array.from({ length: 30 }, () => ({ topicType: "LOGISTICS_OBJECT_TYPE", topic: `${CARGO}Shipment` })),
        ...Array.from({ length: 30 }, () => ({ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic: shipment })),
      ];
      let accepted = 0;
      for (const ask of asks)
        if (await insert({ ...ask, subscriber, requestedBy: subscriber, agentScopes: ["events:read"], typeCap: 20 }))
          accepted += 1;
      expect(accepted).toBe(3);
      const matched = await subscriptionsMatchingAwb.rows(db.prisma, {
        objectIds: [shipment],
        classes: classesOf([`${CARGO}Shipment`]),
        eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      });
      expect(matched.filter((row) => row.topic === shipment || row.topic.startsWith(CARGO))).toHaveLength(3);
    });

    it("insert's cap for an API client is its max_subscriptions, not the default", async () => {
      const clientId = await fixtures(db).client(1);
      const subscriber = `organization-${clientId}`;
      await stored({ subscriber, clientId, defaultCap: 100 });
      expect(await insert({ subscriber, clientId, defaultCap: 100 })).toBeUndefined();
    });

    /** Holds a subscriber's lock in a transaction that has inserted `asked`, until `release` is called. */
    const holdLock = async (asked: ReturnType<typeof request>) => {
      let release!: () => void;
      const holds = new Promise<void>((resolve) => (release = resolve));
      let lockedNow!: () => void;
      const locked = new Promise<void>((resolve) => (lockedNow = resolve));
      const done = db.prisma.$transaction(
        async (tx) => {
          await lockSubscriber.affectedRows(tx, { subscriber: asked.subscriber });
          const [row] = await insertSubscriptionRequest.rows(tx, asked);
          lockedNow();
          await holds;
          return row;
        },
        { timeout: 20_000 },
      );
      await locked;
      return { release, done };
    };

    if (backend === "pglite")
      it("lock is taken and given back on the embedded database, whose one connection runs nothing beside it", async () => {
        const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
        const asked = request({ subscriber, defaultCap: 1 });
        const first = await holdLock(asked);
        first.release();
        expect(await first.done).toMatchObject({ id: asked.id, status: "REQUEST_ACCEPTED" });
        expect(await insert({ subscriber, defaultCap: 1 })).toBeUndefined();
      });

    if (backend === "postgres")
      it("lock holds a subscriber's requests one after the other: a second count waits for the first insert's commit", async () => {
        const subscriber = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
        const asked = request({ subscriber, defaultCap: 1 });
        const first = await holdLock(asked);
        let secondDone = false;
        const second = db.prisma
          .$transaction(async (tx) => {
            await lockSubscriber.affectedRows(tx, { subscriber });
            return (await insertSubscriptionRequest.rows(tx, request({ subscriber, defaultCap: 1 })))[0];
          })
          .finally(() => (secondDone = true));
        // The second waits on the lock while the first holds it: seen waiting in pg_locks, not after a delay.
        while (!(await waitingOnAdvisoryLock())) await new Promise((resolve) => setImmediate(resolve));
        expect(secondDone).toBe(false);
        first.release();
        expect(await first.done).toMatchObject({ id: asked.id, status: "REQUEST_ACCEPTED" });
        expect(await second).toBeUndefined();
        expect(await db.prisma.oneRecordSubscription.count({ where: { subscriber } })).toBe(1);
      });

    if (backend === "postgres")
      it("requester lock holds one requester's pending requests within pendingCap when two name different subscribers at once", async () => {
        const store = createSubscriptionStore(db.prisma);
        const requestedBy = `organization-${randomUUID()}`;
        const third = () => {
          const fields = request({
            status: "REQUEST_PENDING",
            decidedBy: null,
            requestedBy,
            subscriber: `https://1r.${randomUUID()}.example/o`,
            pendingCap: 1,
          });
          return { ...fields, subscription: JSON.parse(fields.subscription) as Record<string, unknown> };
        };
        let release!: () => void;
        const holds = new Promise<void>((resolve) => (release = resolve));
        let insertedNow!: () => void;
        const inserted = new Promise<void>((resolve) => (insertedNow = resolve));
        // The first holds the requester's lock itself; the store's insert must wait for it.
        const first = store.transaction(async (tx) => {
          await lockRequester.affectedRows(tx, { requester: requestedBy });
          const written = await store.insert(tx, third());
          insertedNow();
          await holds;
          return written;
        });
        await inserted;
        let secondDone = false;
        const second = store.transaction((tx) => store.insert(tx, third())).finally(() => (secondDone = true));
        // The second waits on the requester's lock (seen in pg_locks), not on the subscriber's: another one.
        while (!(await waitingOnAdvisoryLock())) await new Promise((resolve) => setImmediate(resolve));
        expect(secondDone).toBe(false);
        release();
        expect(await first).toHaveProperty("row");
        expect(await second).toHaveProperty("refusal.pending", 1);
        expect(await db.prisma.oneRecordSubscription.count({ where: { requestedBy, status: "REQUEST_PENDING" } })).toBe(
          1,
        );
      });

    it("revoke moves a pending or accepted request to REQUEST_REVOKED and ends its queued deliveries, not the delivered", async () => {
      const row = await insert();
      const pending = await queued(row!.id);
      const parked = await queued(row!.id, "PARKED");
      const delivered = await queued(row!.id, "DELIVERED");
      const other = await insert();
      const othersPending = await queued(other!.id);
      const [revoked] = await revokeSubscriptionRequest.rows(db.prisma, { id: row!.id, revokedBy: "organization-x" });
      expect(revoked).toMatchObject({
        id: row!.id,
        status: "REQUEST_REVOKED",
        decided_by: "organization-x",
        deliveries_ended: 2,
      });
      expect(revoked!.decided_at!.getTime()).toBeGreaterThanOrEqual(row!.decided_at!.getTime());
      for (const id of [pending, parked])
        expect(await deliveryOf(id)).toMatchObject({
          status: "DEAD",
          lastError: "subscription revoked",
          leaseUntil: null,
          leaseToken: null,
          completedAt: expect.any(Date),
        });
      expect((await deliveryOf(delivered)).status).toBe("DELIVERED");
      expect((await deliveryOf(othersPending)).status).toBe("PENDING");
      // Once: a second revocation, of a revoked or rejected request, takes nothing.
      expect(await revokeSubscriptionRequest.rows(db.prisma, { id: row!.id, revokedBy: "organization-x" })).toEqual([]);
      const rejected = await insert({ status: "REQUEST_REJECTED", reason: "no", errorStatus: 403 });
      expect(
        await revokeSubscriptionRequest.rows(db.prisma, { id: rejected!.id, revokedBy: "organization-x" }),
      ).toEqual([]);
    });

    it("revoke fences out a send under way: the claim's outcome is not recorded, and the delivery is never claimed again", async () => {
      const row = await insert();
      const id = await queued(row!.id);
      const store = createDeliveryStore(db.sql);
      const origin = (await deliveryOf(id)).origin;
      const others = (await db.prisma.delivery.findMany({ where: { status: "PENDING", origin: { not: origin } } })).map(
        (d) => d.origin,
      );
      const [claimed] = await store.claimDue({ limit: 1, perOrigin: 1, excludeOrigins: others, leaseMs: 60_000 });
      expect(claimed?.id).toBe(id);
      await revokeSubscriptionRequest.rows(db.prisma, { id: row!.id, revokedBy: "organization-x" });
      // The send ends after the revocation: its outcome names a lease that no longer holds the delivery.
      const recorded = await store.recordOutcomes([
        {
          deliveryId: id,
          leaseToken: claimed!.leaseToken,
          status: "DELIVERED",
          nextAttemptAt: null,
          statusCode: 204,
          error: null,
          startedAt: new Date(),
          durationMs: 5,
        },
      ]);
      expect(recorded).toBe(0);
      expect(await deliveryOf(id)).toMatchObject({ status: "DEAD", attemptCount: 0, leaseToken: null });
      expect(await store.claimDue({ limit: 10, perOrigin: 10, excludeOrigins: others, leaseMs: 60_000 })).toEqual([]);
    });

    it("partner-read answers a registered partner by its Organization id, and nothing for another", async () => {
      const organization = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      await db.prisma.oneRecordPartner.create({
        data: { organization, serverUrl: "https://1r.forwarder.example", announceObjects: true },
      });
      expect(await readPartner.rows(db.prisma, { organization })).toEqual([
        {
          organization,
          server_url: "https://1r.forwarder.example",
          client_id: null,
          propose_subscriptions: false,
          announce_objects: true,
        },
      ]);
      expect(await readPartner.rows(db.sql, { organization: "organization-nobody" })).toEqual([]);
    });
  });
});
