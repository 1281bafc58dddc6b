import { randomUUID } from "node:crypto";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { getJson, graphql } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import {
  type NotificationPost,
  type NotificationReceiver,
  notificationBody,
  oneRecordSubscription,
  type OneRecordSubscriptionFields,
  queueOneRecordNotification,
  registerPartnerServer,
  startNotificationReceiver,
} from "../support/onerecord-outbox";
import { until } from "../support/webhooks";
import { spawnWorker } from "../support/worker-process";
import { inFullSuite } from "../support/suite";

/**
 * ONE Record notifications through the real outbox: a gateway on each database, a token endpoint and
 * subscribers' notification endpoints on loopback. Notifications are queued as the producers queue
 * them (queueDeliveries with kind ONE_RECORD, one onerecord_subscription row each), and the gateway's
 * own delivery worker sends them.
 */
const CLIENT_ID = "carrier-gateway";
const CLIENT_SECRET = "notifications-secret";
const MEDIA_TYPE = "application/ld+json; version=2.3.0";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications sent by the delivery worker on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let app: App;
    let url: string;
    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      issuer.addClient(CLIENT_ID, CLIENT_SECRET);
      ({ app, url } = await startApp(backend, disposers, {
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: CLIENT_ID,
        ONE_RECORD_CLIENT_SECRET: CLIENT_SECRET,
        ONE_RECORD_TOKEN_AUDIENCE: "https://subscriber.test",
        // Quick retries, enough of them that a receiver down for a while loses nothing.
        DELIVERY_RETRY_SCHEDULE: Array.from({ length: 30 }, (_, i) => (i < 5 ? "100ms" : "500ms")).join(","),
        DELIVERY_CIRCUIT_FAILURES: "2",
        DELIVERY_CIRCUIT_OPEN_MS: "200",
        DELIVERY_CIRCUIT_MAX_OPEN_MS: "400",
        DELIVERY_DISABLE_AFTER_HOURS: "1",
      }));
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(() => issuer.setTokenEndpoint("ok"));

    const receiver = () => startNotificationReceiver(disposers);
    const subscribe = (to: NotificationReceiver, fields: OneRecordSubscriptionFields = {}) =>
      oneRecordSubscription(app.database, { endpoint: to.endpoint, ...fields });
    const queue = async (subscriptionId: string | null, to: NotificationReceiver, payload?: string) => {
      const id = await queueOneRecordNotification(app.database, {
        subscriptionId,
        endpoint: to.endpoint,
        ...(payload ? { payload } : {}),
      });
      app.worker!.wake();
      return id;
    };
    const row = (id: string) =>
      app.database.prisma.delivery.findUniqueOrThrow({
        where: { id },
        include: { attempts: { orderBy: { startedAt: "asc" } } },
      });
    const settled = (ids: string[], status: "DELIVERED" | "DEAD" | "PARKED" | "PENDING") =>
      until(
        async () => (await app.database.prisma.delivery.count({ where: { id: { in: ids }, status } })) === ids.length,
        {
          what: `${ids.length} notifications ${status}`,
        },
      );
    const postsOf = (to: NotificationReceiver, id: string) =>
      to.posts.filter((p) => p.headers["notification-id"] === id);
    const tokenRequests = () => issuer.tokenRequests().length;
    const metric = async (line: RegExp) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(
        text
          .split("\n")
          .find((l) => line.test(l))
          ?.split(" ")
          .pop() ?? 0,
      );
    };

    it("POSTs each as queued, byte for byte, with the ONE Record headers, its id as Notification-Id and a bearer token of the token endpoint: one token request for many concurrent sends", async () => {
      const to = await receiver();
      const subscriptionId = await subscribe(to);
      const payloads = Array.from({ length: 30 }, (_, i) =>
        notificationBody(`http://publisher.test/onerecord/logistics-objects/shipment-${i}`),
      );
      const before = tokenRequests();
      const ids = await Promise.all(payloads.map((payload) => queue(subscriptionId, to, payload)));
      await settled(ids, "DELIVERED");
      expect(tokenRequests() - before).toBe(1);
      const token = issuer.issuedTokens().at(-1);
      expect(to.posts).toHaveLength(30);
      for (const [i, id] of ids.entries()) {
        const [post] = postsOf(to, id);
        expect(post!.body).toBe(payloads[i]);
        expect(post!.headers).toMatchObject({
          "content-type": MEDIA_TYPE,
          accept: MEDIA_TYPE,
          authorization: `Bearer ${token}`,
          "notification-id": id,
          "user-agent": expect.stringContaining("ONE Record notification"),
        });
        expect(post!.headers["webhook-signature"]).toBeUndefined();
        expect(await row(id)).toMatchObject({
          attemptCount: 1,
          attempts: [expect.objectContaining({ statusCode: 204 })],
        });
      }
      // The audience asked for is the token's.
      expect(issuer.tokenRequests().at(-1)!.form).toMatchObject({ audience: "https://subscriber.test" });
      expect(await metric(/^gateway_deliveries_total\{outcome="delivered",kind="onerecord"\}/)).toBeGreaterThanOrEqual(
        30,
      );
    });

    it("after a 401, forgets the token, takes a fresh one and POSTs once more in the same attempt", async () => {
      const to = await receiver();
      const stale = new Set(issuer.issuedTokens());
      to.answerWith((post) => (stale.has(post.token ?? "") ? 401 : 204));
      const before = tokenRequests();
      const id = await queue(await subscribe(to), to);
      await settled([id], "DELIVERED");
      const posts = postsOf(to, id);
      expect(posts.map((p) => p.token === undefined || stale.has(p.token))).toEqual([true, false]);
      expect(posts[1]!.body).toBe(posts[0]!.body);
      expect(tokenRequests() - before).toBe(1);
      expect(await row(id)).toMatchObject({
        attemptCount: 1,
        attempts: [expect.objectContaining({ statusCode: 204, error: null })],
      });
    });

    it("after a second 401, records the attempt as failed (HTTP 401) with no third POST; the next attempt goes on the schedule (here a 410: dead), and an operator can send it again", async () => {
      const to = await receiver();
      let answered = 0;
      // An audience of its own: the earlier test's 401 made the default audience's token be forgotten
      // moments ago, and a 401 forgets one at most once per REFRESH_AFTER_401_MS per audience.
      await registerPartnerServer(app.database, to.endpoint, "https://second-401.test");
      to.answerWith(() => (++answered <= 2 ? 401 : answered === 3 ? 410 : 204));
      const before = tokenRequests();
      const id = await queue(await subscribe(to), to);
      await settled([id], "DEAD");
      expect((await row(id)).attempts.map((a) => [a.statusCode, a.error])).toEqual([
        [401, "HTTP 401"],
        [410, "HTTP 410"],
      ]);
      const posts = postsOf(to, id);
      expect(posts).toHaveLength(3);
      expect(tokenRequests() - before).toBe(2); // its audience's first token, refreshed once in the first attempt
      expect(posts[2]!.token).toBe(posts[1]!.token);

      const { data, errors } = await graphql(
        url,
        `
          mutation ($id: ID!) {
            redeliverOneRecordDelivery(deliveryId: $id) {
              deliveryId
              status
              attemptCount
            }
          }
        `,
        { id },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(errors).toBeUndefined();
      expect(data.redeliverOneRecordDelivery).toMatchObject({ deliveryId: id, attemptCount: 0 });
      app.worker!.wake();
      await settled([id], "DELIVERED");
      expect(new Set(postsOf(to, id).map((p) => p.body)).size).toBe(1);
    });

    it("retries with the same Notification-Id and the same bytes until the subscriber takes it", async () => {
      const to = await receiver();
      let answered = 0;
      to.answerWith(() => [503, 500][answered++] ?? 204);
      const id = await queue(await subscribe(to), to);
      await settled([id], "DELIVERED");
      const posts = postsOf(to, id);
      expect(posts).toHaveLength(3);
      expect(new Set(posts.map((p) => p.body)).size).toBe(1);
      expect((await row(id)).attempts.map((a) => a.statusCode)).toEqual([503, 500, 204]);
    });

    it("keeps a notification past the retry schedule while its subscription stands: retried until the subscriber takes it", async () => {
      const to = await receiver();
      let answered = 0;
      to.answerWith(() => (answered++ === 0 ? 503 : 204));
      const subscriptionId = await subscribe(to);
      const id = await queueOneRecordNotification(app.database, { subscriptionId, endpoint: to.endpoint });
      // Its schedule used up (30 waits): a webhook's next failure would be its last.
      await app.database.prisma.delivery.update({ where: { id }, data: { attemptCount: 30 } });
      app.worker!.wake();
      await until(async () => (await row(id)).attemptCount === 31, { what: "the attempt past the schedule" });
      expect(await row(id)).toMatchObject({ status: "PENDING", completedAt: null });
      await settled([id], "DELIVERED");
      expect((await row(id)).attempts.map((a) => a.statusCode)).toEqual([503, 204]);
    });

    it("sends nothing for a revoked or rejected subscription, while an accepted one's later notification goes, and an expired one's queued while it was valid", async () => {
      const to = await receiver();
      const held = [
        await queue(await subscribe(to, { status: "REQUEST_REVOKED" }), to),
        await queue(await subscribe(to, { status: "REQUEST_REJECTED" }), to),
      ];
      const sent = await queue(await subscribe(to), to);
      const expired = await queue(await subscribe(to, { expiresAt: new Date(Date.now() - 1_000) }), to);
      await settled([sent, expired], "DELIVERED");
      for (const id of held) {
        expect(postsOf(to, id)).toEqual([]);
        expect(await row(id)).toMatchObject({ status: "PENDING", attemptCount: 0, leaseToken: null });
      }
    });

    it("loses nothing while the subscriber is down: each notification arrives once it is back", async () => {
      const to = await receiver();
      const subscriptionId = await subscribe(to);
      await to.stop();
      const ids = await Promise.all(Array.from({ length: 12 }, () => queue(subscriptionId, to)));
      // While it is down, its origin's circuit opens: then only a probe goes now and then, the rest wait.
      await until(
        async () =>
          (await app.database.prisma.delivery.aggregate({ where: { id: { in: ids } }, _sum: { attemptCount: true } }))
            ._sum.attemptCount! >= 4,
        { what: "attempts while the subscriber is down" },
      );
      const failed = await app.database.prisma.delivery.findFirstOrThrow({
        where: { id: { in: ids }, attemptCount: { gte: 1 } },
      });
      expect(failed).toMatchObject({ status: "PENDING", lastError: "ECONNREFUSED" });
      await to.start();
      await settled(ids, "DELIVERED");
      expect(new Set(to.posts.map((p) => p.headers["notification-id"]))).toEqual(new Set(ids));
    });

    it("a failing token endpoint fails the attempt with a clear error, does not count against the subscriber's circuit, and the notification goes once it answers", async () => {
      const to = await receiver();
      const before = new Set(issuer.issuedTokens());
      // The subscriber refuses the token remembered from before, so a fresh one is needed (for an audience
      // of its own: a 401 forgets a token at most once per REFRESH_AFTER_401_MS per audience).
      await registerPartnerServer(app.database, to.endpoint, "https://token-endpoint-down.test");
      to.answerWith((post) => (before.has(post.token ?? "") ? 401 : 204));
      issuer.setTokenEndpoint("unavailable");
      const opened = await metric(/^gateway_delivery_circuit_changes_total\{change="opened"\}/);
      const subscriptionId = await subscribe(to);
      const ids = await Promise.all(Array.from({ length: 3 }, () => queue(subscriptionId, to)));
      await until(
        async () =>
          (await app.database.prisma.delivery.count({
            where: { id: { in: ids }, attemptCount: { gte: 2 } },
          })) === ids.length,
        { what: "two failed attempts at each" },
      );
      for (const id of ids)
        expect((await row(id)).lastError).toBe(
          "no access token: the token endpoint answered HTTP 503 (temporarily_unavailable)",
        );
      expect(to.posts.filter((p: NotificationPost) => !before.has(p.token ?? ""))).toEqual([]);
      expect(await metric(/^gateway_delivery_circuit_changes_total\{change="opened"\}/)).toBe(opened);
      expect(await metric(/^gateway_onerecord_token_requests_total\{outcome="failed"\}/)).toBeGreaterThan(0);
      issuer.setTokenEndpoint("ok");
      await settled(ids, "DELIVERED");
    });

    it("disables a ONE Record subscription whose notifications keep failing (its others parked), and an operator's enable sends them", async () => {
      const to = await receiver();
      to.answerWith(() => 500);
      const subscriptionId = await subscribe(to, { failingSince: new Date(Date.now() - 2 * 3_600_000) });
      const first = await queue(subscriptionId, to);
      await until(
        async () =>
          (await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id: subscriptionId } }))
            .disabledAt !== null,
        { what: "the subscription disabled" },
      );
      await settled([first], "PARKED");
      const second = await queue(subscriptionId, to);
      await settled([second], "PARKED");
      expect(postsOf(to, second)).toEqual([]);
      expect(await metric(/^gateway_subscriptions_disabled_total\{kind="onerecord"\}/)).toBe(1);

      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const listed = await graphql(
        url,
        `
          query ($id: ID) {
            oneRecordDeliveries(subscriptionRequestId: $id) {
              deliveryId
              status
              endpoint
              subscriptionRequestId
              attempts {
                statusCode
              }
            }
          }
        `,
        { id: subscriptionId },
        admin,
      );
      expect(listed.data.oneRecordDeliveries).toEqual([
        {
          deliveryId: second,
          status: "PARKED",
          endpoint: to.endpoint,
          subscriptionRequestId: subscriptionId,
          attempts: [],
        },
        {
          deliveryId: first,
          status: "PARKED",
          endpoint: to.endpoint,
          subscriptionRequestId: subscriptionId,
          attempts: [{ statusCode: 500 }],
        },
      ]);
      to.answerWith(() => 204);
      const enabled = await graphql(
        url,
        `
          mutation ($id: ID!) {
            enableOneRecordSubscription(subscriptionRequestId: $id)
          }
        `,
        { id: subscriptionId },
        admin,
      );
      expect(enabled).toEqual({ data: { enableOneRecordSubscription: true } });
      await settled([first, second], "DELIVERED");
    });

    it("keeps ONE Record notifications out of a client's webhook delivery log and redelivery, and its admin queries from other scopes", async () => {
      const to = await receiver();
      const client = await app.database.prisma.client.findFirstOrThrow();
      const id = await queueOneRecordNotification(app.database, {
        subscriptionId: await subscribe(to, { clientId: client.id }),
        endpoint: to.endpoint,
        clientId: client.id,
      });
      app.worker!.wake();
      await settled([id], "DELIVERED");
      const redeliver = await getJson(`${url}/carrier/handling/shipment/deliveries/${id}/redeliver`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(redeliver.status).toBe(404);
      const missing = await graphql(
        url,
        `query { oneRecordDeliveries(subscriptionRequestId: "${randomUUID()}") { deliveryId } }`,
        {},
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(missing.errors?.[0]?.extensions?.code).toBe("ACTION_REQUEST_NOT_FOUND");
    });
  });
});

describe("ONE Record notifications without token settings", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("are sent without an Authorization header", async () => {
    const { app } = await startApp("pglite", disposers);
    const to = await startNotificationReceiver(disposers);
    const subscriptionId = await oneRecordSubscription(app.database, { endpoint: to.endpoint });
    const id = await queueOneRecordNotification(app.database, { subscriptionId, endpoint: to.endpoint });
    app.worker!.wake();
    await until(() => to.posts.length === 1, { what: "the notification" });
    expect(to.posts[0]!.headers).toMatchObject({ "notification-id": id, "content-type": MEDIA_TYPE });
    expect(to.posts[0]!.headers.authorization).toBeUndefined();
  });
});

inFullSuite(describeBackend("postgres"))(
  "ONE Record notifications from a standalone worker (npm run worker, PostgreSQL)",
  () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());
    const SECRETS_KEY = Buffer.alloc(32, 9).toString("base64");

    // dist/src/worker.js, as `npm run worker` runs it: `npm run build` first, like the other process tests.
    it("are sent by it with a bearer token of the token endpoint, and its /metrics counts them", async () => {
      const issuer = await startOidcIssuer(disposers);
      issuer.addClient(CLIENT_ID, CLIENT_SECRET);
      const { app, env } = await startApp("postgres", disposers, { SECRETS_KEY, DELIVERY_WORKER: "false" });
      const worker = await spawnWorker({
        DATABASE_URL: env.DATABASE_URL!,
        SECRETS_KEY,
        ALLOW_PRIVATE_CALLBACKS: env.ALLOW_PRIVATE_CALLBACKS!,
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: CLIENT_ID,
        ONE_RECORD_CLIENT_SECRET: CLIENT_SECRET,
      });
      disposers.add(async () => {
        worker.child.kill("SIGTERM");
        await worker.exited;
      });
      const to = await startNotificationReceiver(disposers);
      const subscriptionId = await oneRecordSubscription(app.database, { endpoint: to.endpoint });
      const id = await queueOneRecordNotification(app.database, { subscriptionId, endpoint: to.endpoint });
      await until(() => to.posts.length === 1, { what: "the notification" });
      expect(to.posts[0]!.headers).toMatchObject({
        "notification-id": id,
        authorization: `Bearer ${issuer.issuedTokens()[0]}`,
      });
      await until(
        async () => (await app.database.prisma.delivery.findUniqueOrThrow({ where: { id } })).status === "DELIVERED",
        { what: "the outcome recorded" },
      );
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(metrics).toMatch(/^gateway_deliveries_total\{outcome="delivered",kind="onerecord"\} 1$/m);
      expect(metrics).toMatch(/^gateway_onerecord_token_requests_total\{outcome="ok"\} 1$/m);
    });
  },
);
