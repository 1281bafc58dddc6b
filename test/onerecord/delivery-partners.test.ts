import type { App } from "../../src/app";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import {
  type NotificationReceiver,
  queueOneRecordNotification,
  registerPartnerServer,
  startNotificationReceiver,
} from "../support/onerecord-outbox";
import { until } from "../support/webhooks";

/**
 * Where the delivery worker sends ONE Record notifications and with which token (docs/ONE-RECORD.md
 * "Delivery of notifications", docs/SECURITY.md): only to a registered partner's server, with a token
 * of that partner's audience; a receiver answering 401 to everything does not make a token request
 * per notification. A gateway on each database, a real token endpoint and receivers on loopback.
 */
const CLIENT_ID = "carrier-gateway";
const CLIENT_SECRET = "notifications-secret";
const DEFAULT_AUDIENCE = "https://default-audience.test";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications to registered partners only on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let app: App;
    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      issuer.addClient(CLIENT_ID, CLIENT_SECRET);
      ({ app } = await startApp(backend, disposers, {
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: CLIENT_ID,
        ONE_RECORD_CLIENT_SECRET: CLIENT_SECRET,
        ONE_RECORD_TOKEN_AUDIENCE: DEFAULT_AUDIENCE,
        // One attempt each within a test: the next an hour later.
        DELIVERY_RETRY_SCHEDULE: "1h",
        DELIVERY_CIRCUIT_FAILURES: "1000",
      }));
    });
    afterAll(() => disposers.disposeAll());

    const queue = async (to: NotificationReceiver, registered = true) => {
      const id = await queueOneRecordNotification(app.database, {
        subscriptionId: null,
        endpoint: to.endpoint,
        registered,
      });
      app.worker!.wake();
      return id;
    };
    const attempted = (ids: string[]) =>
      until(
        async () =>
          (await app.database.prisma.delivery.count({ where: { id: { in: ids }, attemptCount: { gte: 1 } } })) ===
          ids.length,
        { what: `${ids.length} notifications attempted` },
      );
    const audienceOf = (token: string | undefined) =>
      (JSON.parse(Buffer.from(token!.split(".")[1]!, "base64url").toString()) as { aud: unknown }).aud;

    it("sends nothing, no token either, to an endpoint on no registered partner's server: the attempt fails saying so", async () => {
      const to = await startNotificationReceiver(disposers);
      const before = issuer.tokenRequests().length;
      const id = await queue(to, false);
      await attempted([id]);
      expect(await app.database.prisma.delivery.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: "PENDING",
        lastError: expect.stringContaining("is on no registered ONE Record partner's server"),
      });
      expect(to.posts).toEqual([]);
      expect(issuer.tokenRequests().length).toBe(before);
    });

    it("sends partner X a token for X's audience, partner Y one for Y's, and a partner without one the default audience's", async () => {
      const [x, y, plain] = await Promise.all([1, 2, 3].map(() => startNotificationReceiver(disposers)));
      await registerPartnerServer(app.database, x!.endpoint, "https://x.test");
      await registerPartnerServer(app.database, y!.endpoint, "https://y.test");
      const ids = [await queue(x!), await queue(y!), await queue(plain!)];
      await attempted(ids);
      expect([x, y, plain].map((to) => audienceOf(to!.posts[0]!.token))).toEqual([
        "https://x.test",
        "https://y.test",
        DEFAULT_AUDIENCE,
      ]);
      expect(await app.database.prisma.delivery.count({ where: { id: { in: ids }, status: "DELIVERED" } })).toBe(3);
    });

    it("a receiver answering 401 to every token costs at most one token refresh for many notifications", async () => {
      const refusing = await startNotificationReceiver(disposers);
      await registerPartnerServer(app.database, refusing.endpoint, "https://refusing.test");
      refusing.answerWith(() => 401);
      const before = issuer.tokenRequests().length;
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await queue(refusing));
      await attempted(ids);
      const asked = issuer.tokenRequests().slice(before);
      // Its first token, and one refresh after the first 401: not one per notification.
      expect(asked.length).toBeLessThanOrEqual(2);
      expect(asked.every((r) => r.form.audience === "https://refusing.test")).toBe(true);
      expect(refusing.posts.length).toBeLessThanOrEqual(40);
    });

    it("a token refused once (expired early at the receiver) is refreshed once and the POST made again in the same attempt", async () => {
      const to = await startNotificationReceiver(disposers);
      await registerPartnerServer(app.database, to.endpoint, "https://expiring.test");
      const first = await queue(to);
      await attempted([first]);
      const held = to.posts[0]!.token;
      to.answerWith((post) => (post.token === held ? 401 : 204));
      const before = issuer.tokenRequests().length;
      const id = await queue(to);
      await attempted([id]);
      expect(await app.database.prisma.delivery.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: "DELIVERED",
        attemptCount: 1,
      });
      expect(issuer.tokenRequests().length - before).toBe(1);
      const posts = to.posts.filter((p) => p.headers["notification-id"] === id);
      expect(posts.map((p) => p.token === held)).toEqual([true, false]);
    });
  });
});
