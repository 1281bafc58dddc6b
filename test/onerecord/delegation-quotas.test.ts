import { randomUUID } from "node:crypto";
import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import { MAY_BE_PASSED_ON } from "../../src/onerecord/delegations/access-delegation";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import { ADMIN_KEY, BACKENDS, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { oneRecord } from "../support/onerecord-requests";
import { IN_GATE } from "../support/suite";

/**
 * What one caller can make this server keep through access delegations, and what those grants cost
 * everyone else (docs/ONE-RECORD.md "Access delegations"): quotas per requester and per object, a read
 * whose access check does not grow with an object's grants, grants that end with the API key whose
 * scope made them, and access that is not passed on unless its holder said so.
 */
const API = "https://onerecord.iata.org/ns/api#";
const CONTEXT = { cargo: "https://onerecord.iata.org/ns/cargo#", api: API };
const PIECE = "https://onerecord.iata.org/ns/cargo#Piece";
/**
 * The attack's own numbers: 1,500 delegations of an AWB's Waybill and Shipment to outside Organizations
 * (the gate sends 200: 50 accepted and 150 refused prove the same, at an eighth of the CPU).
 */
const ATTACK_DELEGATIONS = IN_GATE ? 200 : 1_500;
/** Grants of one Waybill to other Organizations, as 30 readers at their quota of 50 would make them. */
const GRANTS_OF_ONE_OBJECT = 1_500;
const DEFAULT_DELEGATES_PER_OBJECT = 50;

/** The base, keys and helpers every describe below shares; `app` is started by its own beforeAll. */
function gateway(env: Record<string, string>, backend: "pglite" | "postgres") {
  const disposers = new Disposers();
  const g = {
    disposers,
    app: undefined as unknown as App,
    base: "",
    issuer: undefined as unknown as OidcIssuer,
    async start() {
      g.issuer = await startOidcIssuer(disposers);
      ({ app: g.app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_OIDC_ISSUER: g.issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: g.issuer.jwksUrl,
        ...env,
      }));
      g.base = `${g.app.url()}/onerecord`;
    },
    async client(...scopes: Scope[]) {
      const { clientId } = await g.app.services.clients.createClient({ name: "partner", callbackPrefixes: ["*"] });
      const issued = await g.app.services.clients.issueKey(clientId, scopes);
      return {
        clientId,
        key: issued.key,
        keyId: issued.keyId,
        organizationId: `organization-${clientId}`,
        organization: `${g.base}/logistics-objects/organization-${clientId}`,
      };
    },
    /** An AWB the gateway knows (one milestone): its Waybill and Shipment URIs. */
    async awb(serial: number) {
      const number = 1_000_000 + serial;
      const awb = `020-${number}${number % 7}`;
      const res = await postJson(
        `${g.app.url()}/carrier/handling/shipment/events`,
        { awb, state: "DEP", timestamp: "2026-11-21T08:00:00Z", station: "FRA", flight: "LH8160" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
      return {
        waybill: `${g.base}/logistics-objects/waybill-${awb}`,
        shipment: `${g.base}/logistics-objects/shipment-${awb}`,
      };
    },
    async piece(token: string) {
      const res = await oneRecord(`${g.base}/logistics-objects`, {
        token,
        body: { "@context": CONTEXT, "@type": "cargo:Piece" },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    },
    delegation(objects: string[], delegate: string, more: Record<string, unknown> = {}) {
      return {
        "@context": CONTEXT,
        "@type": "api:AccessDelegation",
        "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
        "api:isRequestedFor": { "@id": delegate },
        "api:hasLogisticsObject": objects.map((uri) => ({ "@id": uri })),
        ...more,
      };
    },
    /** POSTs a delegation without the conformance check (thousands are sent): status and parsed body. */
    async post(token: string, body: unknown) {
      const res = await fetch(`${g.base}/access-delegations`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/ld+json",
          accept: "application/ld+json",
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, location: res.headers.get("location"), body: text ? JSON.parse(text) : undefined };
    },
    /** The request's status (api:REQUEST_ACCEPTED…) and its error message, as its requester reads it. */
    async statusOf(request: string, token: string) {
      const res = await oneRecord(request, { token });
      expect(res.status).toBe(200);
      return {
        status: res.body["api:hasRequestStatus"]["@id"] as string,
        reason: res.body["api:hasError"]?.["api:hasErrorDetail"]?.["api:hasMessage"] as string | undefined,
        body: res.body,
      };
    },
    /** What `token`'s caller gets for the object, its events and its audit trail. */
    async reads(uri: string, token: string) {
      return Promise.all(
        [uri, `${uri}/logistics-events`, `${uri}/audit-trail`].map(
          async (url) => (await oneRecord(url, { token })).status,
        ),
      );
    },
    grantRows(objectUri: string) {
      return g.app.database.prisma.logisticsObjectGrant.findMany({
        where: { objectId: objectUri.slice(objectUri.lastIndexOf("/") + 1) },
      });
    },
  };
  return g;
}

/** Runs `work` over `items`, `concurrency` at a time, answering the results in order. */
async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

/**
 * Watches this process (the gateway under test runs in it, its embedded database too) until the
 * returned function is called: answers the most CPU it spent between two turns of its event loop,
 * which is how long a request such as /healthz waited behind the gateway's own work. Unlike the wall
 * time between turns, it does not grow when the machine's other processes take the cores.
 */
function watchBusiestTurn(): () => number {
  // Earlier files' garbage collected now (the tests run with --expose-gc): a major collection of the
  // shared test process is not counted as the gateway's turn.
  (globalThis as { gc?: () => void }).gc?.();
  let last = process.cpuUsage();
  let busiestMs = 0;
  const timer = setInterval(() => {
    const spent = process.cpuUsage(last);
    last = process.cpuUsage();
    busiestMs = Math.max(busiestMs, (spent.user + spent.system) / 1000);
  }, 5);
  return () => {
    clearInterval(timer);
    return busiestMs;
  };
}

const messageOf = (body: any): string => [body?.["api:hasErrorDetail"]].flat()[0]?.["api:hasMessage"] ?? "";

describe.each(BEHAVIOUR_BACKENDS)("access delegation quotas and grants on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const g = gateway({}, backend);
    beforeAll(() => g.start());
    afterAll(() => g.disposers.disposeAll());

    it(`${ATTACK_DELEGATIONS} delegations of an AWB's Waybill and Shipment from an events:read key: 50 accepted, the rest 422 and nothing stored, /healthz prompt throughout`, async () => {
      const { waybill, shipment } = await g.awb(1);
      const reader = await g.client("events:read");
      // A victim polling /healthz throughout: every poll must be answered 200.
      let polling = true;
      const healthPolls = (async () => {
        while (polling) {
          expect((await fetch(`${g.app.url()}/healthz`)).status).toBe(200);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const cpu = process.cpuUsage();
      const busiestTurn = watchBusiestTurn();
      const answers = await inPool(
        Array.from({ length: ATTACK_DELEGATIONS }, (_, i) => i),
        4,
        (i) =>
          g.post(
            reader.key,
            g.delegation([waybill, shipment], `https://1r.partner-${i}.example/logistics-objects/org`),
          ),
      );
      const { user, system } = process.cpuUsage(cpu);
      const busiestTurnMs = busiestTurn();
      polling = false;
      await healthPolls;

      const accepted = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status === 422);
      expect([accepted.length, refused.length]).toEqual([
        DEFAULT_DELEGATES_PER_OBJECT,
        ATTACK_DELEGATIONS - DEFAULT_DELEGATES_PER_OBJECT,
      ]);
      expect(refused.every((a) => messageOf(a.body).startsWith("DELEGATION_LIMIT_REACHED: "))).toBe(true);
      expect(messageOf(refused[0]!.body)).toContain("ONE_RECORD_DELEGATES_PER_OBJECT");
      // Stored: the 50 accepted requests and their 100 grants, nothing of the refused ones.
      const { prisma } = g.app.database;
      expect(await prisma.oneRecordAccessDelegation.count({ where: { requestedBy: reader.organizationId } })).toBe(
        DEFAULT_DELEGATES_PER_OBJECT,
      );
      expect(await prisma.logisticsObjectGrant.count({ where: { grantedBy: reader.organizationId } })).toBe(
        2 * DEFAULT_DELEGATES_PER_OBJECT,
      );
      // No request, /healthz included, waited for more than 500 ms of the gateway's work: measured in CPU,
      // which a loaded machine does not stretch as it does wall time.
      expect(busiestTurnMs).toBeLessThan(500);
      // The work of one (the process's CPU, the embedded database's included): a few indexed statements,
      // whatever the requester already holds.
      expect((user + system) / 1000 / ATTACK_DELEGATIONS).toBeLessThan(100);
    }, 300_000);

    it(`the read of a Waybill reads one grant of the caller's, not the object's ${GRANTS_OF_ONE_OBJECT}`, async () => {
      // Rows read from the grants' table and its indexes, as PostgreSQL's statistics count them: PGlite
      // is one backend, whose pending counts a flush makes visible at once.
      const rowsRead = async () => {
        const { prisma } = g.app.database;
        await prisma.$queryRawUnsafe("SELECT 1 FROM (SELECT pg_stat_force_next_flush()) flushed");
        await prisma.$queryRawUnsafe("SELECT 1 FROM (SELECT pg_stat_clear_snapshot()) cleared");
        const [row] = await prisma.$queryRawUnsafe<Array<{ n: number }>>(
          `SELECT ((SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'logistics_object_grant')
                 + (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'logistics_object_grant'))::int AS n`,
        );
        return row!.n;
      };
      if (backend !== "pglite") return; // Another backend's statistics are flushed by its own connections, late.
      const { waybill } = await g.awb(2);
      const forwarder = await g.client("events:read");
      const airline = await g.client("subscriptions");
      expect((await g.post(forwarder.key, g.delegation([waybill], airline.organization))).status).toBe(201);
      const readOnce = async () => {
        const before = await rowsRead();
        // The delegate (by its grant) and a reader by scope: the object, its events, its audit trail.
        expect(await g.reads(waybill, airline.key)).toEqual([200, 200, 200]);
        expect(await g.reads(waybill, forwarder.key)).toEqual([200, 200, 200]);
        return (await rowsRead()) - before;
      };
      const withOne = await readOnce();
      // 1,500 more Organizations granted the Waybill (as 30 readers at their quota of 50 would make).
      await g.app.database.prisma.logisticsObjectGrant.createMany({
        data: Array.from({ length: GRANTS_OF_ONE_OBJECT }, (_, i) => ({
          objectId: waybill.slice(waybill.lastIndexOf("/") + 1),
          organizationId: `https://1r.partner-${i}.example/logistics-objects/org`,
          grantedBy: `organization-reader-${i % 30}`,
          delegationId: randomUUID(),
        })),
      });
      const withMany = await readOnce();
      expect(withMany).toBe(withOne);
      // Each access check is a probe or two of the caller's own grant.
      expect(withOne).toBeLessThanOrEqual(12);
    });

    it("revoking the key whose scope made a grant withdraws it: the delegate reads 403 at once", async () => {
      const { waybill, shipment } = await g.awb(3);
      const forwarder = await g.client("events:read", "objects:write");
      const second = await g.app.services.clients.issueKey(forwarder.clientId, ["events:read"]);
      const airline = await g.client("subscriptions");
      const own = await g.piece(forwarder.key);
      const scoped = (await g.post(forwarder.key, g.delegation([waybill, shipment], airline.organization))).location!;
      expect((await g.post(forwarder.key, g.delegation([own], airline.organization))).status).toBe(201);
      expect(await g.reads(waybill, airline.key)).toEqual([200, 200, 200]);
      expect(await g.reads(own, airline.key)).toEqual([200, 200, 200]);

      await g.app.services.clients.revokeKey(forwarder.keyId);
      expect(await g.reads(waybill, airline.key)).toEqual([403, 403, 403]);
      expect(await g.reads(shipment, airline.key)).toEqual([403, 403, 403]);
      // What the forwarder granted as the Piece's holder is not its key's to take along.
      expect(await g.reads(own, airline.key)).toEqual([200, 200, 200]);

      // Its next request withdraws the ended grants and revokes the delegation left with none.
      const again = await g.post(second.key, g.delegation([waybill], airline.organization));
      expect(again.status).toBe(201);
      expect(await g.statusOf(scoped, second.key)).toMatchObject({ status: "api:REQUEST_REVOKED" });
      expect((await g.grantRows(shipment)).filter((r) => r.organizationId === airline.organizationId)).toEqual([]);
      expect(await g.reads(waybill, airline.key)).toEqual([200, 200, 200]);
    });

    it("an agent's grant made on its token's scope ends when the token does", async () => {
      const { waybill } = await g.awb(4);
      const airline = await g.client("subscriptions");
      const agent = "https://1r.forwarder.example/logistics-objects/forwarder";
      const token = await g.issuer.token(
        { logistics_agent_uri: agent, scope: "events:read" },
        { expiresInSeconds: 600 },
      );
      const expiresAt = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).exp as number;
      expect((await g.post(token, g.delegation([waybill], airline.organization))).status).toBe(201);
      const [grant] = (await g.grantRows(waybill)).filter((r) => r.organizationId === airline.organizationId);
      expect(grant?.expiresAt).toEqual(new Date(expiresAt * 1000));
      expect(grant?.grantedWithKey).toBeNull();
    });

    it("a grantee cannot pass access on unless the holder said so; passed on, it goes no further", async () => {
      const holder = await g.client("objects:write");
      const [x, y, z] = [
        await g.client("subscriptions"),
        await g.client("subscriptions"),
        await g.client("subscriptions"),
      ];
      const uri = await g.piece(holder.key);
      expect((await g.post(holder.key, g.delegation([uri], x.organization))).status).toBe(201);
      expect(await g.reads(uri, x.key)).toEqual([200, 200, 200]);

      // X to Y: refused by the holder's policy, stored rejected with the reason; Y reads nothing.
      const toY = (await g.post(x.key, g.delegation([uri], y.organization))).location!;
      const refusal = await g.statusOf(toY, x.key);
      expect(refusal.status).toBe("api:REQUEST_REJECTED");
      expect(refusal.reason).toContain("did not let you pass on");
      expect(await g.reads(uri, y.key)).toEqual([403, 403, 403]);
      const toZ = (await g.post(y.key, g.delegation([uri], z.organization))).location!;
      expect((await g.statusOf(toZ, y.key)).status).toBe("api:REQUEST_REJECTED");
      expect(await g.reads(uri, z.key)).toEqual([403, 403, 403]);

      // The same on an AWB's Waybill delegated by a reader by scope, and on the operator's grant.
      const { waybill } = await g.awb(5);
      const forwarder = await g.client("events:read");
      expect((await g.post(forwarder.key, g.delegation([waybill], x.organization))).status).toBe(201);
      const waybillToY = (await g.post(x.key, g.delegation([waybill], y.organization))).location!;
      expect((await g.statusOf(waybillToY, x.key)).status).toBe("api:REQUEST_REJECTED");
      expect(await g.reads(waybill, y.key)).toEqual([403, 403, 403]);
      const granted = await g.piece(holder.key);
      await createOperatorGrants(g.app.database.prisma, g.base).grant(
        granted.slice(granted.lastIndexOf("/") + 1),
        x.organization,
      );
      const grantedToY = (await g.post(x.key, g.delegation([granted], y.organization))).location!;
      expect((await g.statusOf(grantedToY, x.key)).status).toBe("api:REQUEST_REJECTED");
      expect(await g.reads(granted, y.key)).toEqual([403, 403, 403]);
    });

    it("the holder lets its delegate pass access on once, with this server's mayBePassedOn; nobody else may say so", async () => {
      const holder = await g.client("objects:write");
      const [x, y, z] = [
        await g.client("subscriptions"),
        await g.client("subscriptions"),
        await g.client("subscriptions"),
      ];
      const uri = await g.piece(holder.key);
      const toX = (await g.post(holder.key, g.delegation([uri], x.organization, { [MAY_BE_PASSED_ON]: true })))
        .location!;
      const shown = (await g.statusOf(toX, holder.key)).body["api:hasAccessDelegation"];
      expect(shown[MAY_BE_PASSED_ON]).toBe(true);
      // X may pass it on, but not let Y pass it on in turn.
      const asked = await g.post(x.key, g.delegation([uri], y.organization, { [MAY_BE_PASSED_ON]: true }));
      const refused = await g.statusOf(asked.location!, x.key);
      expect(refused.status).toBe("api:REQUEST_REJECTED");
      expect(refused.reason).toContain(MAY_BE_PASSED_ON);
      expect(
        (await g.statusOf((await g.post(x.key, g.delegation([uri], y.organization))).location!, x.key)).status,
      ).toBe("api:REQUEST_ACCEPTED");
      expect(await g.reads(uri, y.key)).toEqual([200, 200, 200]);
      const toZ = (await g.post(y.key, g.delegation([uri], z.organization))).location!;
      expect((await g.statusOf(toZ, y.key)).status).toBe("api:REQUEST_REJECTED");
      expect(await g.reads(uri, z.key)).toEqual([403, 403, 403]);
      // Not a boolean: 400 naming the property, nothing stored.
      const before = await g.app.database.prisma.oneRecordAccessDelegation.count();
      const bad = await g.post(holder.key, g.delegation([uri], z.organization, { [MAY_BE_PASSED_ON]: "yes" }));
      expect(bad.status).toBe(400);
      expect(messageOf(bad.body)).toContain(`${MAY_BE_PASSED_ON}: must be an xsd:boolean`);
      expect(await g.app.database.prisma.oneRecordAccessDelegation.count()).toBe(before);
    });

    it("a subscriber without a registered server is told to register it with partner:add --agent, not that its token names one", async () => {
      const agent = "https://1r.nowhere.example/logistics-objects/forwarder";
      const token = await g.issuer.token({ logistics_agent_uri: agent, scope: "events:read" });
      const { waybill } = await g.awb(6);
      const res = await oneRecord(`${g.base}/subscriptions`, {
        token,
        body: {
          "@context": { api: API },
          "@type": "api:Subscription",
          "api:hasSubscriber": { "@id": agent },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
          "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": waybill },
        },
      });
      expect(res.status).toBe(422);
      expect(messageOf(res.body)).toContain("--agent <your logistics_agent_uri>");
      expect(messageOf(res.body)).not.toContain("logistics_agent_uri is an Organization on your server");
    });
  });
});

describe.each(BACKENDS)("access delegation quotas under concurrent requests on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const PER_OBJECT = 3;
    const PER_REQUESTER = 100;
    const g = gateway(
      {
        ONE_RECORD_DELEGATES_PER_OBJECT: String(PER_OBJECT),
        ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER: String(PER_REQUESTER),
      },
      backend,
    );
    beforeAll(() => g.start());
    afterAll(() => g.disposers.disposeAll());

    it("20 concurrent delegations of one object: exactly ONE_RECORD_DELEGATES_PER_OBJECT accepted", async () => {
      const holder = await g.client("objects:write");
      const uri = await g.piece(holder.key);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => g.post(holder.key, g.delegation([uri], `https://1r.p${i}.example/o`))),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(PER_OBJECT);
      expect(answers.filter((a) => a.status === 422)).toHaveLength(20 - PER_OBJECT);
      expect(await g.grantRows(uri)).toHaveLength(PER_OBJECT);
    });

    it("12 concurrent delegations of 10 objects each: exactly ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER objects' worth accepted", async () => {
      const holder = await g.client("objects:write");
      const ids = Array.from({ length: 120 }, () => randomUUID());
      await g.app.database.prisma.logisticsObject.createMany({
        data: ids.map((id) => ({
          id,
          type: PIECE,
          types: [PIECE],
          body: { "@id": id },
          revision: 1,
          createdBy: holder.organizationId,
        })),
      });
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          g.post(
            holder.key,
            g.delegation(
              ids.slice(i * 10, i * 10 + 10).map((id) => `${g.base}/logistics-objects/${id}`),
              `https://1r.p${i}.example/o`,
            ),
          ),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(PER_REQUESTER / 10);
      const refused = answers.filter((a) => a.status === 422);
      expect(refused).toHaveLength(2);
      expect(messageOf(refused[0]!.body)).toContain("ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER");
      expect(
        await g.app.database.prisma.logisticsObjectGrant.count({ where: { grantedBy: holder.organizationId } }),
      ).toBe(PER_REQUESTER);
    });
  });
});
