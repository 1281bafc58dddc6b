import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Database } from "../../src/db/database";
import type { AppError } from "../../src/errors";
import { notificationEndpointOf } from "../../src/onerecord/partners/notification-endpoint";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { createPartnerServers } from "../../src/onerecord/partners/partner-servers";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers } from "../support/harness";
import { fixtures, openTestDatabase } from "../support/test-database";
import { inFullSuite } from "../support/suite";

/** The operator's partner registry (npm run admin -- partner:add, partner:remove, partners) and where notifications go. */
const BASE_URL = "https://1r.carrier.example/onerecord";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record partners on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => e as AppError,
      );

    it("registers a client's server, replaces it when registered again, resolves its endpoint, and forgets it", async () => {
      const partners = createPartnerAdmin(db.prisma, BASE_URL);
      const clientId = await fixtures(db).client();
      const organization = `organization-${clientId}`;
      expect(await notificationEndpointOf(db.prisma, organization)).toBeUndefined();
      const added = await partners.add({
        serverUrl: "https://1r.forwarder.example/api/",
        clientId,
        announceObjects: true,
      });
      expect(added).toMatchObject({
        organization,
        serverUrl: "https://1r.forwarder.example/api",
        clientId,
        proposeSubscriptions: false,
        announceObjects: true,
      });
      expect(await notificationEndpointOf(db.prisma, organization)).toBe(
        "https://1r.forwarder.example/api/notifications",
      );
      await partners.add({ serverUrl: "https://1r.other.example", clientId, proposeSubscriptions: true });
      expect(await notificationEndpointOf(db.sql, organization)).toBe("https://1r.other.example/notifications");
      expect((await partners.list()).filter((p) => p.organization === organization)).toEqual([
        expect.objectContaining({
          serverUrl: "https://1r.other.example",
          proposeSubscriptions: true,
          announceObjects: false,
        }),
      ]);
      expect(await partners.remove(clientId)).toBe(true);
      expect(await partners.remove(clientId)).toBe(false);
      expect(await notificationEndpointOf(db.prisma, organization)).toBeUndefined();
    });

    it("registers an agent by its URI (one of this server's, with the base URL, by its local id); unregistered, an agent has no endpoint (its URI's server is not taken)", async () => {
      const partners = createPartnerAdmin(db.prisma, BASE_URL);
      const agent = `https://1r.forwarder.example/logistics-objects/${randomUUID()}`;
      // An agent does not choose where this server sends requests and tokens: only the operator does.
      expect(await notificationEndpointOf(db.prisma, agent)).toBeUndefined();
      await partners.add({ serverUrl: "https://notify.forwarder.example/1r", agentUri: agent });
      expect(await notificationEndpointOf(db.prisma, agent)).toBe("https://notify.forwarder.example/1r/notifications");
      const local = `organization-${randomUUID()}`;
      expect(
        (await partners.add({ serverUrl: "https://x.example", agentUri: `${BASE_URL}/logistics-objects/${local}` }))
          .organization,
      ).toBe(local);
      expect(await partners.remove(agent)).toBe(true);
    });

    it("stores a partner's audience, and refuses another audience for a server another partner is registered on", async () => {
      const partners = createPartnerAdmin(db.prisma, BASE_URL);
      const [a, b] = [await fixtures(db).client(), await fixtures(db).client()];
      const serverUrl = `https://${randomUUID()}.example/1r`;
      expect(await partners.add({ serverUrl, clientId: a, audience: "https://aud-a.test" })).toMatchObject({
        audience: "https://aud-a.test",
      });
      for (const audience of [undefined, "https://aud-b.test"])
        expect((await failure(partners.add({ serverUrl, clientId: b, audience })))?.code).toBe("VALIDATION_FAILED");
      expect(await partners.add({ serverUrl, clientId: b, audience: "https://aud-a.test" })).toMatchObject({
        audience: "https://aud-a.test",
      });
      // A partner alone on its server changes its own audience.
      const alone = `https://${randomUUID()}.example`;
      await partners.add({ serverUrl: alone, clientId: a });
      expect(await partners.add({ serverUrl: alone, clientId: a, audience: "https://new.test" })).toMatchObject({
        audience: "https://new.test",
      });
      await partners.add({ serverUrl: `https://${randomUUID()}.example`, clientId: b });
      expect((await failure(partners.add({ serverUrl: alone, clientId: b })))?.code).toBe("VALIDATION_FAILED");
      expect((await failure(partners.add({ serverUrl: alone, clientId: b, audience: " " })))?.code).toBe(
        "VALIDATION_FAILED",
      );
      await partners.remove(a);
      await partners.remove(b);
    });

    it("refuses a server that is no absolute http(s) URL, an unknown client, and neither or both of client and agent", async () => {
      const partners = createPartnerAdmin(db.prisma, BASE_URL);
      const clientId = await fixtures(db).client();
      const before = await db.prisma.oneRecordPartner.count();
      for (const serverUrl of ["ftp://x.example", "/relative", "https://x.example/?q=1", "https://user:pw@x.example"])
        expect((await failure(partners.add({ serverUrl, clientId })))?.code).toBe("VALIDATION_FAILED");
      expect((await failure(partners.add({ serverUrl: "https://x.example", clientId: randomUUID() })))?.code).toBe(
        "CLIENT_NOT_FOUND",
      );
      expect((await failure(partners.add({ serverUrl: "https://x.example" })))?.code).toBe("VALIDATION_FAILED");
      expect(
        (await failure(partners.add({ serverUrl: "https://x.example", clientId, agentUri: "https://a.example/x" })))
          ?.code,
      ).toBe("VALIDATION_FAILED");
      expect((await failure(partners.add({ serverUrl: "https://x.example", agentUri: "not a uri" })))?.code).toBe(
        "VALIDATION_FAILED",
      );
      expect(await db.prisma.oneRecordPartner.count()).toBe(before);
    });
  });
});

describe("which registered partner's server a URL is on (the senders' partner lookup)", () => {
  const servers = [
    { serverUrl: "https://1r.forwarder.example/api", audience: "https://forwarder.example" },
    { serverUrl: "https://1r.forwarder.example/api/v2", audience: "https://v2.forwarder.example" },
    { serverUrl: "https://1r.other.example", audience: null },
  ];
  it.each([
    ["https://1r.forwarder.example/api/notifications", "https://forwarder.example"],
    ["https://1r.forwarder.example/api/v2/notifications", "https://v2.forwarder.example"],
    ["https://1r.other.example/notifications", null],
  ])("%s → the audience %s", async (url, audience) => {
    const lookup = createPartnerServers(async () => servers);
    expect(await lookup.partnerOf(url)).toMatchObject({ audience });
  });
  it.each([
    "https://1r.forwarder.example/apix/notifications",
    "https://1r.forwarder.example/notifications",
    "https://1r.other.example.attacker.test/notifications",
    "http://1r.other.example:8080/notifications",
  ])("%s → on no partner's server", async (url) => {
    expect(await createPartnerServers(async () => servers).partnerOf(url)).toBeUndefined();
  });
  it("reads the partners again at once for a URL on none (a partner just registered), else within its TTL", async () => {
    let now = 0;
    let reads = 0;
    let registered: typeof servers = [];
    const lookup = createPartnerServers(
      async () => {
        reads++;
        return registered;
      },
      { ttlMs: 1_000, now: () => now },
    );
    expect(await lookup.partnerOf("https://1r.other.example/notifications")).toBeUndefined();
    registered = servers;
    expect(await lookup.partnerOf("https://1r.other.example/notifications")).toMatchObject({ audience: null });
    expect(await lookup.partnerOf("https://1r.other.example/notifications")).toMatchObject({ audience: null });
    expect(reads).toBe(2);
    registered = [{ serverUrl: "https://1r.other.example", audience: "https://changed.test" }];
    now += 1_000;
    expect(await lookup.partnerOf("https://1r.other.example/notifications")).toMatchObject({
      audience: "https://changed.test",
    });
    expect(reads).toBe(3);
  });
});

inFullSuite()("npm run admin -- partner:add, partners, partner:remove", () => {
  const script = path.resolve(__dirname, "../../dist/scripts/admin.js");
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gw-partners-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const admin = (...args: string[]) =>
    spawnSync(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? "", DATA_DIR: dir, LOG_LEVEL: "silent" },
      encoding: "utf8",
    });

  it("registers a client's and an agent's server, lists them, refuses bad input, and forgets them", () => {
    const created = admin("client:create", "--name", "Forwarder", "--prefixes", "*");
    const clientId = /client ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    const added = admin(
      "partner:add",
      "--server",
      "https://1r.forwarder.example/api/",
      "--client",
      clientId,
      "--propose",
    );
    expect(added.stderr).toBe("");
    expect(added.stdout).toContain(
      `partner organization-${clientId}: notifications to https://1r.forwarder.example/api/notifications (subscriptions proposed)`,
    );
    const agent = "https://1r.other.example/logistics-objects/org-9";
    expect(
      admin(
        "partner:add",
        "--server",
        "https://1r.other.example",
        "--agent",
        agent,
        "--announce",
        "--audience",
        "https://1r.other.example",
      ).stdout,
    ).toContain("(tokens for https://1r.other.example, new objects announced)");
    const listed = admin("partners").stdout;
    expect(listed).toContain(
      `organization-${clientId}  https://1r.forwarder.example/api (subscriptions proposed)  since `,
    );
    expect(listed).toContain(
      `${agent}  https://1r.other.example (tokens for https://1r.other.example, new objects announced)  since `,
    );

    const bad = admin("partner:add", "--server", "ftp://x.example", "--client", clientId);
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringContaining("VALIDATION_FAILED")]);
    const neither = admin("partner:remove");
    expect([neither.status, neither.stderr]).toEqual([
      2,
      expect.stringContaining("partner:remove needs --client or --agent"),
    ]);

    expect(admin("partner:remove", "--client", clientId).stdout).toContain("removed");
    const again = admin("partner:remove", "--client", clientId);
    expect([again.status, again.stderr]).toEqual([1, expect.stringContaining("NOT_FOUND")]);
    expect(admin("partners").stdout).not.toContain(clientId);
  }, 120_000); // each CLI run opens the embedded database
});
