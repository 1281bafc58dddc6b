import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { ADMIN_KEY, Disposers, startApp } from "../support/harness";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";

/**
 * The subscriber side's operator commands (npm run admin -- onerecord:want, onerecord:unwant,
 * onerecord:wants, notifications), run as the built script on an embedded database the gateway has
 * stopped using.
 */
describe("npm run admin -- onerecord:want, onerecord:wants, onerecord:unwant, notifications", () => {
  const script = path.resolve(__dirname, "../../dist/scripts/admin.js");
  const disposers = new Disposers();
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gw-wishes-"));
  });
  afterAll(async () => {
    await disposers.disposeAll();
    await rm(dir, { recursive: true, force: true });
  });
  const admin = (...args: string[]) =>
    spawnSync(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? "", DATA_DIR: dir, LOG_LEVEL: "silent", BOOTSTRAP_API_KEY: ADMIN_KEY },
      encoding: "utf8",
    });

  it("sets, lists and removes wishes, refusing bad input; the gateway then answers GET /subscriptions from them", async () => {
    const added = admin(
      "onerecord:want",
      "--topic-type",
      "LOGISTICS_OBJECT_TYPE",
      "--topic",
      "cargo:Shipment",
      "--events",
      "LOGISTICS_OBJECT_UPDATED,LOGISTICS_OBJECT_CREATED",
      "--send-body",
      "--description",
      "every shipment",
    );
    expect(added.stderr).toBe("");
    expect(added.stdout).toContain(
      `wanted: LOGISTICS_OBJECT_TYPE ${CARGO}Shipment  events: LOGISTICS_OBJECT_CREATED, LOGISTICS_OBJECT_UPDATED  with bodies  "every shipment"`,
    );
    expect(
      admin(
        "onerecord:want",
        "--topic-type",
        "LOGISTICS_OBJECT_IDENTIFIER",
        "--topic",
        "*",
        "--events",
        "LOGISTICS_EVENT_RECEIVED",
      ).status,
    ).toBe(0);
    const listed = admin("onerecord:wants").stdout;
    expect(listed).toContain("LOGISTICS_OBJECT_IDENTIFIER (any object)  events: LOGISTICS_EVENT_RECEIVED");
    expect(listed).toContain(`LOGISTICS_OBJECT_TYPE ${CARGO}Shipment  events:`);

    const bad = admin(
      "onerecord:want",
      "--topic-type",
      "LOGISTICS_OBJECT_TYPE",
      "--topic",
      "cargo:Forklift",
      "--events",
      "X",
    );
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringContaining("VALIDATION_FAILED")]);
    const missing = admin("onerecord:want", "--topic-type", "LOGISTICS_OBJECT_TYPE", "--topic", "cargo:Piece");
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringContaining("onerecord:want needs --events")]);

    expect(admin("onerecord:unwant", "--topic-type", "LOGISTICS_OBJECT_IDENTIFIER", "--topic", "*").stdout).toContain(
      "removed",
    );
    const again = admin("onerecord:unwant", "--topic-type", "LOGISTICS_OBJECT_IDENTIFIER", "--topic", "*");
    expect([again.status, again.stderr]).toEqual([1, expect.stringContaining("NOT_FOUND")]);

    // The gateway on that database answers from what the operator set, and receives a notification.
    const { app, url } = await startApp("pglite", disposers, { DATA_DIR: dir });
    const wanted = await oneRecord(
      `${url}/onerecord/subscriptions?topicType=${encodeURIComponent("https://onerecord.iata.org/ns/api#LOGISTICS_OBJECT_TYPE")}&topic=${encodeURIComponent(`${CARGO}Shipment`)}`,
      { token: ADMIN_KEY },
    );
    expect([wanted.status, wanted.body["api:sendLogisticsObjectBody"]]).toEqual([200, true]);
    // Notifications are taken from registered partners only: the bootstrap client, the one client here.
    const { id: clientId } = await app.database.prisma.client.findFirstOrThrow({ select: { id: true } });
    await createPartnerAdmin(app.database.prisma, undefined).add({ serverUrl: "https://1r.publisher.test", clientId });
    const notified = await oneRecord(`${url}/onerecord/notifications`, {
      token: ADMIN_KEY,
      headers: { "notification-id": "n-1" },
      body: {
        "@context": { api: "https://onerecord.iata.org/ns/api#" },
        "@type": "api:Notification",
        "api:hasEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
        "api:hasLogisticsObject": { "@id": "https://1r.publisher.test/logistics-objects/s-1" },
      },
    });
    expect(notified.status).toBe(204);
    await app.stop();

    const received = admin("notifications", "--bodies");
    expect(received.stderr).toBe("");
    expect(received.stdout).toMatch(
      /\n\S+Z {2}LOGISTICS_EVENT_RECEIVED {2}https:\/\/1r\.publisher\.test\/logistics-objects\/s-1 {2}from organization-[0-9a-f-]{36} {2}id n-1\n {4}\{"@type":\["https:\/\/onerecord\.iata\.org\/ns\/api#Notification"\]/,
    );
    expect(admin("notifications", "--since", "2999-01-01T00:00:00Z").stdout).not.toContain("LOGISTICS_EVENT_RECEIVED");
    const badSince = admin("notifications", "--since", "yesterday");
    expect([badSince.status, badSince.stderr]).toEqual([
      2,
      expect.stringContaining("--since must be an ISO 8601 time"),
    ]);
  }, 180_000); // each CLI run opens the embedded database
});
