import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import type { App } from "../../src/app";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { oneRecord } from "../support/onerecord-requests";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { MAX_NOTIFICATION_BYTES } from "../../src/onerecord/notifications-in/notifications-in.routes";

const API = "https://onerecord.iata.org/ns/api#";
const EXAMPLES = path.resolve(__dirname, "examples");
const AUDIENCE = "https://gateway.test/onerecord";
const AGENT = "https://1r.forwarder.test/logistics-objects/forwarder-org";

/** A notification as a publisher sends it (the specification's Notification_example1, another server's URIs). */
const notification = (fields: Record<string, unknown> = {}) => ({
  "@context": { api: API },
  "@type": "api:Notification",
  "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
  "api:hasLogisticsObject": { "@id": "https://1r.publisher.test/logistics-objects/1a8ded38" },
  "api:hasLogisticsObjectType": {
    "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
    "@value": "https://onerecord.iata.org/ns/cargo#Piece",
  },
  "api:isTriggeredBy": { "@id": "https://1r.publisher.test/action-requests/599fea49" },
  ...fields,
});

/** POST {base}/notifications on both databases (docs/ONE-RECORD.md "Receiving notifications"). */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications received on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let issuer: OidcIssuer;
    /** A forwarder's key, of a scope that does not matter: any registered partner may notify. */
    let key = "";
    let sender = "";

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      ({ app, url } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
        ONE_RECORD_OIDC_AUDIENCE: AUDIENCE,
      }));
      base = `${url}/onerecord`;
      const client = await app.services.clients.createClient({ name: "publisher", callbackPrefixes: ["*"] });
      key = (await app.services.clients.issueKey(client.clientId, ["events:read"])).key;
      sender = `organization-${client.clientId}`;
      // Notifications are taken from registered partners only (notifications-in.quota.http.test.ts).
      const partners = createPartnerAdmin(app.database.prisma, base);
      await partners.add({ serverUrl: "https://1r.publisher.test", clientId: client.clientId });
      await partners.add({ serverUrl: "https://1r.forwarder.test", agentUri: AGENT });
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const stored = (where: { notificationId?: string; sender?: string } = {}) =>
      app.database.prisma.oneRecordNotificationReceived.findMany({ where, orderBy: { receivedAt: "asc" } });
    const post = (body: unknown, headers: Record<string, string> = {}, token: string | null = key) =>
      oneRecord(`${base}/notifications`, { body, token, headers });
    const counted = async (eventType: string): Promise<number> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) => l.startsWith(`gateway_onerecord_notifications_received_total{event_type="${eventType}"}`));
      return line === undefined ? 0 : Number(line.split(" ").at(-1));
    };

    it("answers 204 and stores a notification once per Notification-Id, however often it is sent; counted once", async () => {
      const id = randomUUID();
      const before = await counted("LOGISTICS_OBJECT_UPDATED");
      for (let i = 0; i < 3; i++) {
        const res = await post(notification(), { "notification-id": id });
        expect([res.status, res.text]).toEqual([204, ""]);
      }
      const rows = await stored({ notificationId: id });
      expect(rows).toEqual([
        expect.objectContaining({
          sender,
          eventType: "LOGISTICS_OBJECT_UPDATED",
          logisticsObject: "https://1r.publisher.test/logistics-objects/1a8ded38",
        }),
      ]);
      // Kept as expanded JSON-LD, whatever form it came in.
      expect(rows[0]!.body).toEqual(
        expect.objectContaining({
          "@type": [`${API}Notification`],
          [`${API}hasEventType`]: [{ "@id": `${API}LOGISTICS_OBJECT_UPDATED` }],
        }),
      );
      expect(await counted("LOGISTICS_OBJECT_UPDATED")).toBe(before + 1);
    });

    it("without a Notification-Id, stores each one sent (nothing tells them apart)", async () => {
      const object = `https://1r.publisher.test/logistics-objects/${randomUUID()}`;
      const body = notification({ "api:hasLogisticsObject": { "@id": object } });
      expect((await post(body)).status).toBe(204);
      expect((await post(body)).status).toBe(204);
      expect(
        await app.database.prisma.oneRecordNotificationReceived.count({ where: { logisticsObject: object } }),
      ).toBe(2);
    });

    it("takes each of the specification's example notifications, the object's body included", async () => {
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const example = JSON.parse(readFileSync(path.join(EXAMPLES, `Notification_example${n}.json`), "utf8"));
        const id = `example-${n}-${randomUUID()}`;
        expect([n, (await post(example, { "notification-id": id })).status]).toEqual([n, 204]);
        expect((await stored({ notificationId: id }))[0]?.eventType).toEqual(
          expect.stringMatching(/^(LOGISTICS_|CHANGE_REQUEST_)/),
        );
      }
    });

    it("from an OIDC agent: its agent URI is the sender, and the same Notification-Id of another sender is another notification", async () => {
      const id = randomUUID();
      expect((await post(notification(), { "notification-id": id })).status).toBe(204);
      const token = await issuer.token({ logistics_agent_uri: AGENT, aud: AUDIENCE });
      expect((await post(notification(), { "notification-id": id }, token)).status).toBe(204);
      expect((await stored({ notificationId: id })).map((row) => row.sender).sort()).toEqual([AGENT, sender].sort());
    });

    it("refuses without credentials (401) and stores nothing", async () => {
      const id = randomUUID();
      const res = await post(notification(), { "notification-id": id }, null);
      expect(res.status).toBe(401);
      expect(res.body["@type"]).toBe("api:Error");
      expect(await stored({ notificationId: id })).toEqual([]);
    });

    const refusals: Array<
      [string, () => { body?: unknown; contentType?: string; headers?: Record<string, string> }, number, string?]
    > = [
      [
        "not a Notification",
        () => ({ body: { ...notification(), "@type": "api:Subscription" } }),
        400,
        `${API}Notification`,
      ],
      ["no event type", () => ({ body: notification({ "api:hasEventType": undefined }) }), 400, `${API}hasEventType`],
      [
        "an event type outside the enumeration",
        () => ({ body: notification({ "api:hasEventType": { "@id": "api:SOMETHING_HAPPENED" } }) }),
        400,
        `${API}hasEventType`,
      ],
      [
        "an event type given as text",
        () => ({ body: notification({ "api:hasEventType": "LOGISTICS_OBJECT_UPDATED" }) }),
        400,
        `${API}hasEventType`,
      ],
      [
        "two event types",
        () => ({
          body: notification({
            "api:hasEventType": [{ "@id": "api:LOGISTICS_OBJECT_UPDATED" }, { "@id": "api:LOGISTICS_OBJECT_CREATED" }],
          }),
        }),
        400,
        `${API}hasEventType`,
      ],
      [
        "an object without a URI (a blank node)",
        () => ({
          body: notification({ "api:hasLogisticsObject": { "@type": "https://onerecord.iata.org/ns/cargo#Piece" } }),
        }),
        400,
        `${API}hasLogisticsObject`,
      ],
      [
        "two objects",
        () => ({
          body: notification({
            "api:hasLogisticsObject": [{ "@id": "https://a.test/lo/1" }, { "@id": "https://a.test/lo/2" }],
          }),
        }),
        400,
        `${API}hasLogisticsObject`,
      ],
      [
        "an object type that is no IRI",
        () => ({ body: notification({ "api:hasLogisticsObjectType": "Piece" }) }),
        400,
        `${API}hasLogisticsObjectType`,
      ],
      [
        "a trigger without a URI",
        () => ({ body: notification({ "api:isTriggeredBy": { "@id": "_:b0" } }) }),
        400,
        `${API}isTriggeredBy`,
      ],
      [
        "a remote context",
        () => ({ body: { ...notification(), "@context": "https://example.test/context.jsonld" } }),
        400,
      ],
      ["malformed JSON", () => ({ body: '{"@type": "api:Notification",' }), 400],
      ["a body that is no object", () => ({ body: '"LOGISTICS_OBJECT_UPDATED"' }), 400],
      ["application/json", () => ({ body: notification(), contentType: "application/json" }), 415],
      ["no body", () => ({}), 415],
      [
        "a body over 256 KiB",
        () => ({ body: notification({ "api:hasDescription": "x".repeat(MAX_NOTIFICATION_BYTES) }) }),
        413,
      ],
      [
        "a Notification-Id over 200 characters",
        () => ({ body: notification(), headers: { "notification-id": "x".repeat(201) } }),
        400,
      ],
    ];
    // As objects: a row shorter than the test function's parameters would be taken for a done callback.
    const cases = refusals.map(([name, request, status, property]) => ({ name, request, status, property }));
    it.each(cases)("refuses $name ($status) and stores nothing", async ({ request, status, property }) => {
      const before = await app.database.prisma.oneRecordNotificationReceived.count();
      const { body, contentType, headers } = request();
      const res = await oneRecord(`${base}/notifications`, {
        token: key,
        ...(body === undefined ? { method: "POST" } : { body }),
        ...(contentType ? { contentType } : {}),
        headers: headers ?? { "notification-id": randomUUID() },
      });
      expect(res.status).toBe(status);
      expect(res.body["@type"]).toBe("api:Error");
      if (property !== undefined)
        expect(res.body["api:hasErrorDetail"]).toEqual(
          expect.arrayContaining([expect.objectContaining({ "api:hasProperty": property })]),
        );
      expect(await app.database.prisma.oneRecordNotificationReceived.count()).toBe(before);
    });

    it("refuses a body over 256 KiB sent without a length (413) and stores nothing", async () => {
      const before = await app.database.prisma.oneRecordNotificationReceived.count();
      const text = JSON.stringify(notification({ "api:hasDescription": "x".repeat(MAX_NOTIFICATION_BYTES) }));
      const res = await fetch(`${base}/notifications`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/ld+json; version=2.3.0",
          "notification-id": randomUUID(),
        },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await app.database.prisma.oneRecordNotificationReceived.count()).toBe(before);
    });

    it("takes POST only: another method answers 405 with Allow", async () => {
      const res = await oneRecord(`${base}/notifications`, { token: key });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    });
  });
});

describe("a notification received is logged: one info line with its sender, event type and object", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("logs it once, not its repeats", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const { app, url } = await startApp(
      "pglite",
      disposers,
      { LOG_LEVEL: "info" },
      { log: pino({ level: "info" }, sink) },
    );
    const client = await app.services.clients.createClient({ name: "logged", callbackPrefixes: ["*"] });
    const token = (await app.services.clients.issueKey(client.clientId, ["events:read"])).key;
    await createPartnerAdmin(app.database.prisma, undefined).add({
      serverUrl: "https://1r.logged.test",
      clientId: client.clientId,
    });
    const id = randomUUID();
    for (let i = 0; i < 2; i++)
      expect(
        (
          await oneRecord(`${url}/onerecord/notifications`, {
            body: notification(),
            token,
            headers: { "notification-id": id },
          })
        ).status,
      ).toBe(204);
    const logged = lines.filter((line) => line.msg === "ONE Record notification received");
    expect(logged).toEqual([
      expect.objectContaining({
        level: 30,
        eventType: "LOGISTICS_OBJECT_UPDATED",
        logisticsObject: "https://1r.publisher.test/logistics-objects/1a8ded38",
        notificationId: id,
        sender: expect.stringMatching(/\/onerecord\/logistics-objects\/organization-[0-9a-f-]{36}$/),
      }),
    ]);
  });
});
