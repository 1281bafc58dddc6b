import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import { MAX_DELEGATED_OBJECTS, MAY_BE_PASSED_ON } from "../../src/onerecord/delegations/access-delegation";
import { MAX_REJECTED_DELEGATIONS_PER_DAY } from "../../src/onerecord/delegations/delegations.service";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { lockDelegationObjects } from "../../src/onerecord/sql/delegation-objects-lock.sql";
import { revokeDelegation } from "../../src/onerecord/sql/delegation-revoke.sql";
import { withdrawDelegation } from "../../src/onerecord/sql/delegation-withdraw.sql";
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { itInFullSuite } from "../support/suite";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { assertConforms } from "../support/onerecord-conformance";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";

/**
 * Access delegations over HTTP (docs/ONE-RECORD.md "Access delegations"): POST /access-delegations,
 * decided on arrival by the holder's policy; the grants it makes read the objects and their events,
 * expire with it, go at once on revocation with whatever was passed on from them (the trust chain).
 */
const API = "https://onerecord.iata.org/ns/api#";
const CONTEXT = { cargo: "https://onerecord.iata.org/ns/cargo#", api: API, xsd: "http://www.w3.org/2001/XMLSchema#" };
const AWB = "020-12345675";
const AGENT = "https://1r.gha.example/logistics-objects/organization-gha";
/** The holder lets the delegate pass the access on (this server's extension of api:AccessDelegation). */
const PASSABLE = { [MAY_BE_PASSED_ON]: true };

describe.each(BACKENDS)("ONE Record access delegations on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    // Behaviour over HTTP: on the embedded default in the gate, on PostgreSQL too in the full suite.
    // The race below runs on PostgreSQL in either suite.
    const behaviourIt: jest.It = backend === "pglite" ? it : itInFullSuite;
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let issuer: OidcIssuer;
    /** The holder: it creates the objects. */
    let holder: string;
    /** The airline: no scope, so it reads only what it is granted. */
    let airline: { key: string; organization: string };
    let stranger: { key: string; organization: string };
    /** A ground handler calling as an OIDC agent of another server, without scopes. */
    let gha: string;

    const newClient = async (...scopes: Scope[]) => {
      const { clientId } = await app.services.clients.createClient({
        name: `client ${scopes.join(" ")}`,
        callbackPrefixes: ["*"],
      });
      return {
        key: (await app.services.clients.issueKey(clientId, scopes)).key,
        organization: `${base}/logistics-objects/organization-${clientId}`,
      };
    };

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
      }));
      base = `${app.url()}/onerecord`;
      holder = (await newClient("objects:write")).key;
      // A key with every scope but objects:write and events:read: scopes open none of the holder's objects.
      airline = await newClient("events:write", "subscriptions");
      stranger = await newClient("objects:write", "events:write");
      gha = await issuer.token({ logistics_agent_uri: AGENT }, { expiresInSeconds: 3600 });
    });
    afterAll(() => disposers.disposeAll());

    const piece = async (): Promise<string> => {
      const res = await oneRecord(`${base}/logistics-objects`, {
        token: holder,
        body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };
    const delegation = (objects: string[], delegate: string, more: Record<string, unknown> = {}) => ({
      "@context": CONTEXT,
      "@type": "api:AccessDelegation",
      "api:hasDescription": "Our GHA requires read access to Piece for handling",
      "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
      "api:isRequestedFor": [{ "@id": delegate }],
      "api:notifyRequestStatusChange": false,
      "api:hasLogisticsObject": objects.map((uri) => ({ "@id": uri })),
      ...more,
    });
    /** Asks for the delegation as `token`'s caller: 201 with Location and Type; answers the request's URI. */
    const delegate = async (token: string, body: unknown): Promise<string> => {
      const res = await oneRecord(`${base}/access-delegations`, { token, body });
      expect([res.status, res.body]).toEqual([201, undefined]);
      expect(res.headers.get("type")).toBe(`${API}AccessDelegationRequest`);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${base}/action-requests/[0-9a-f-]{36}$`));
      return location;
    };
    /** The request as `token`'s caller reads it (its body checked against the shapes by oneRecord). */
    const requestOf = async (uri: string, token = holder): Promise<any> => {
      const res = await oneRecord(uri, { token });
      expect(res.status).toBe(200);
      expect(res.headers.get("type")).toBe(`${API}AccessDelegationRequest`);
      await assertConforms(res.body);
      return res.body;
    };
    const statusOf = async (uri: string, token = holder) =>
      (await requestOf(uri, token))["api:hasRequestStatus"]["@id"];
    const reads = async (uri: string, token: string): Promise<number[]> =>
      Promise.all(
        [uri, `${uri}/logistics-events`, `${uri}/audit-trail`].map(
          async (url) => (await oneRecord(url, { token })).status,
        ),
      );
    const idOf = (uri: string) => uri.slice(uri.lastIndexOf("/") + 1);
    const grantsOf = (objectUri: string) =>
      app.database.prisma.logisticsObjectGrant.findMany({ where: { objectId: idOf(objectUri) } });
    const expectDenied = async (res: OneRecordAnswer, code: number) => {
      expect(res.status).toBe(code);
      expect(res.body).toMatchObject({ "@type": "api:Error" });
      await assertConforms(res.body);
    };

    behaviourIt(
      "delegates to an Organization that is a logistics object here: whoever authenticates as it reads what it was given",
      async () => {
        const company = await oneRecord(`${base}/logistics-objects`, {
          token: holder,
          body: { "@context": CONTEXT, "@type": "cargo:Company", "cargo:name": "Handling Partner GmbH" },
        });
        expect(company.status).toBe(201);
        const organization = company.headers.get("location")!;
        const asIt = await issuer.token({ logistics_agent_uri: organization }, { expiresInSeconds: 3600 });
        const uri = await piece();
        expect(await reads(uri, asIt)).toEqual([403, 403, 403]);
        const request = await delegate(holder, delegation([uri], organization));
        expect(await statusOf(request)).toBe("api:REQUEST_ACCEPTED");
        expect(await reads(uri, asIt)).toEqual([200, 200, 200]);
        // An object of this server that is no Organization is refused, naming the property.
        const notAnOrganization = await oneRecord(`${base}/access-delegations`, {
          token: holder,
          body: delegation([uri], await piece()),
        });
        await expectDenied(notAnOrganization, 400);
        expect(notAnOrganization.text).toContain("is no Organization");
      },
    );

    behaviourIt(
      "an accepted delegation lets the delegate read the object, its events and audit trail, as a key or an agent",
      async () => {
        const uri = await piece();
        expect(await reads(uri, airline.key)).toEqual([403, 403, 403]);
        const request = await delegate(holder, delegation([uri], airline.organization));
        const body = await requestOf(request);
        expect(body).toMatchObject({
          "@id": request,
          "@type": "api:AccessDelegationRequest",
          "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
          "api:isRequestedBy": { "@id": expect.stringMatching(/\/logistics-objects\/organization-/) },
          "api:hasAccessDelegation": {
            "@type": "api:AccessDelegation",
            "api:hasLogisticsObject": { "@id": uri },
            "api:isRequestedFor": { "@id": airline.organization },
            "api:hasDescription": "Our GHA requires read access to Piece for handling",
          },
          "api:hasRequestStatusHistory": { "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" } },
        });
        expect(await reads(uri, airline.key)).toEqual([200, 200, 200]);
        // Reading only: its events:write posts no event to the object.
        const event = {
          "@context": CONTEXT,
          "@type": "cargo:LogisticsEvent",
          "cargo:eventDate": "2026-11-21T08:00:00Z",
        };
        await expectDenied(await oneRecord(`${uri}/logistics-events`, { token: airline.key, body: event }), 403);
        // The delegate sees the request that names it; a stranger does not.
        expect(await statusOf(request, airline.key)).toBe("api:REQUEST_ACCEPTED");
        await expectDenied(await oneRecord(request, { token: stranger.key }), 403);
        await expectDenied(await oneRecord(uri, { token: stranger.key }), 403);

        expect(await reads(uri, gha)).toEqual([403, 403, 403]);
        await delegate(holder, delegation([uri], AGENT));
        expect(await reads(uri, gha)).toEqual([200, 200, 200]);
        expect((await grantsOf(uri)).map((g) => g.delegationId === null)).toEqual([false, false]);
      },
    );

    behaviourIt("the specification's example A2 as it is, its Piece made one of ours", async () => {
      const uri = await piece();
      const example = {
        "@context": CONTEXT,
        "@type": "api:AccessDelegation",
        "api:hasDescription": "Our GHA requires read access to Piece for handling",
        "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }],
        "api:isRequestedFor": [{ "@id": AGENT }],
        "api:notifyRequestStatusChange": false,
        "api:hasLogisticsObject": [{ "@id": uri }],
      };
      expect(await statusOf(await delegate(holder, example))).toBe("api:REQUEST_ACCEPTED");
      expect(await reads(uri, gha)).toEqual([200, 200, 200]);
    });

    behaviourIt("an expired delegation grants nothing; one that expires in the past is refused", async () => {
      const uri = await piece();
      // Whole seconds: answered in xsd:dateTime's canonical form, which drops the zero fraction.
      const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000).toISOString();
      const request = await delegate(
        holder,
        delegation([uri], airline.organization, { "api:expiresAt": { "@type": "xsd:dateTime", "@value": expiresAt } }),
      );
      const body = await requestOf(request);
      expect(body["api:hasAccessDelegation"]["api:expiresAt"]).toBe(expiresAt.replace(".000Z", "Z"));
      expect(await reads(uri, airline.key)).toEqual([200, 200, 200]);
      // Time passes for the grant: its expiry moved to the past, as the database's clock would see it later.
      await app.database.prisma.logisticsObjectGrant.updateMany({
        where: { objectId: idOf(uri) },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      expect(await reads(uri, airline.key)).toEqual([403, 403, 403]);

      const past = new Date(Date.now() - 60_000).toISOString();
      const before = await app.database.prisma.oneRecordAccessDelegation.count();
      const refused = await oneRecord(`${base}/access-delegations`, {
        token: holder,
        body: delegation([uri], airline.organization, { "api:expiresAt": { "@type": "xsd:dateTime", "@value": past } }),
      });
      await expectDenied(refused, 400);
      expect(refused.body["api:hasErrorDetail"][0]["api:hasProperty"]).toBe(`${API}expiresAt`);
      expect(await app.database.prisma.oneRecordAccessDelegation.count()).toBe(before);
    });

    behaviourIt("revocation by the requester removes access at once; a second revocation is 422", async () => {
      const uri = await piece();
      const request = await delegate(holder, delegation([uri], airline.organization));
      expect(await reads(uri, airline.key)).toEqual([200, 200, 200]);
      // The delegate is no requester: it may not revoke.
      await expectDenied(await oneRecord(request, { token: airline.key, method: "DELETE" }), 403);
      const revoked = await oneRecord(request, { token: holder, method: "DELETE" });
      expect(revoked.status).toBe(204);
      expect(await reads(uri, airline.key)).toEqual([403, 403, 403]);
      expect(await grantsOf(uri)).toEqual([]);
      const body = await requestOf(request);
      expect(body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_REVOKED" },
        "api:isRevokedBy": { "@id": expect.stringMatching(/\/logistics-objects\/organization-/) },
      });
      expect(body["api:isRevokedAt"]).toEqual(expect.any(String));
      await expectDenied(await oneRecord(request, { token: holder, method: "DELETE" }), 422);
    });

    behaviourIt(
      "the objects' holder revokes a delegation another asked for (PATCH ?status=REQUEST_REVOKED)",
      async () => {
        const uri = await piece();
        await delegate(holder, delegation([uri], airline.organization, PASSABLE));
        // The airline passes it on to the ground handler; the holder withdraws that.
        const passedOn = await delegate(airline.key, delegation([uri], AGENT));
        expect(await reads(uri, gha)).toEqual([200, 200, 200]);
        await expectDenied(
          await oneRecord(`${passedOn}?status=REQUEST_REVOKED`, { token: stranger.key, method: "PATCH" }),
          403,
        );
        const res = await oneRecord(`${passedOn}?status=REQUEST_REVOKED`, { token: holder, method: "PATCH" });
        expect(res.status).toBe(204);
        expect(res.headers.get("type")).toBe(`${API}AccessDelegationRequest`);
        expect(await reads(uri, gha)).toEqual([403, 403, 403]);
        expect(await reads(uri, airline.key)).toEqual([200, 200, 200]);
      },
    );

    behaviourIt("decided on arrival: accepting or rejecting is 422 for the holder, 403 for the requester", async () => {
      const uri = await piece();
      await delegate(holder, delegation([uri], airline.organization, PASSABLE));
      const request = await delegate(airline.key, delegation([uri], AGENT));
      for (const status of ["REQUEST_ACCEPTED", "REQUEST_REJECTED"]) {
        await expectDenied(await oneRecord(`${request}?status=${status}`, { token: holder, method: "PATCH" }), 422);
        await expectDenied(
          await oneRecord(`${request}?status=${status}`, { token: airline.key, method: "PATCH" }),
          403,
        );
      }
      expect(await statusOf(request)).toBe("api:REQUEST_ACCEPTED");
    });

    behaviourIt("a stranger cannot delegate: stored rejected with the reason, no grant", async () => {
      const uri = await piece();
      const request = await delegate(stranger.key, delegation([uri], stranger.organization));
      const body = await requestOf(request, stranger.key);
      expect(body["api:hasRequestStatus"]["@id"]).toBe("api:REQUEST_REJECTED");
      expect(body["api:hasError"]).toMatchObject({
        "@type": "api:Error",
        "api:hasTitle": "Not authorized to perform action",
        "api:hasErrorDetail": {
          "api:hasCode": "403",
          "api:hasMessage": expect.stringContaining(`You may not read ${uri}`),
        },
      });
      expect(await grantsOf(uri)).toEqual([]);
      await expectDenied(await oneRecord(uri, { token: stranger.key }), 403);
      // A rejected request is no longer revocable.
      await expectDenied(await oneRecord(request, { token: stranger.key, method: "DELETE" }), 422);
    });

    behaviourIt(
      "past MAX_REJECTED_DELEGATIONS_PER_DAY rejected in 24 hours, a requester's next refused one is 429, stored nothing",
      async () => {
        const requester = await newClient("objects:write", "events:write");
        const requestedBy = requester.organization.slice(requester.organization.lastIndexOf("/") + 1);
        const uri = await piece();
        await app.database.prisma.oneRecordAccessDelegation.createMany({
          data: Array.from({ length: MAX_REJECTED_DELEGATIONS_PER_DAY }, () => ({
            status: "REQUEST_REJECTED",
            requestedBy,
            delegation: {},
            objects: ["piece-x"],
            organizations: [requester.organization],
            permissions: ["GET_LOGISTICS_OBJECT"],
          })),
        });
        const before = await app.database.prisma.oneRecordAccessDelegation.count();
        const res = await oneRecord(`${base}/access-delegations`, {
          token: requester.key,
          body: delegation([uri], requester.organization),
        });
        expect(res.status).toBe(429);
        expect(res.body["@type"]).toBe("api:Error");
        expect(await app.database.prisma.oneRecordAccessDelegation.count()).toBe(before);
      },
    );

    behaviourIt("write permissions are rejected: this server delegates reading only", async () => {
      const uri = await piece();
      for (const permission of ["api:PATCH_LOGISTICS_OBJECT", "api:POST_LOGISTICS_EVENT"]) {
        const request = await delegate(
          holder,
          delegation([uri], airline.organization, {
            "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": permission }],
          }),
        );
        const body = await requestOf(request);
        expect(body["api:hasRequestStatus"]["@id"]).toBe("api:REQUEST_REJECTED");
        expect(body["api:hasError"]["api:hasErrorDetail"]["api:hasMessage"]).toContain("delegates reading only");
      }
      expect(await grantsOf(uri)).toEqual([]);
      expect(await reads(uri, airline.key)).toEqual([403, 403, 403]);
    });

    behaviourIt(
      "trust chain: a delegate passes read access on; withdrawing its own withdraws what it passed on",
      async () => {
        const uri = await piece();
        const expiresAt = new Date(Date.now() + 3_600_000);
        const toAirline = await delegate(
          holder,
          delegation([uri], airline.organization, {
            "api:expiresAt": { "@type": "xsd:dateTime", "@value": expiresAt.toISOString() },
            ...PASSABLE,
          }),
        );
        const toGha = await delegate(airline.key, delegation([uri], AGENT));
        expect(await statusOf(toGha, airline.key)).toBe("api:REQUEST_ACCEPTED");
        expect(await reads(uri, gha)).toEqual([200, 200, 200]);
        // The ground handler's grant lasts no longer than the airline's.
        const ghaGrant = (await grantsOf(uri)).find((g) => g.organizationId === AGENT);
        expect(ghaGrant?.expiresAt).toEqual(expiresAt);

        expect((await oneRecord(toAirline, { token: holder, method: "DELETE" })).status).toBe(204);
        expect(await reads(uri, airline.key)).toEqual([403, 403, 403]);
        expect(await reads(uri, gha)).toEqual([403, 403, 403]);
        const passedOn = await requestOf(toGha, airline.key);
        expect(passedOn).toMatchObject({
          "api:hasRequestStatus": { "@id": "api:REQUEST_REVOKED" },
          "api:isRevokedBy": { "@id": expect.stringMatching(/organization-/) },
        });
        // Without its access, the airline can pass nothing on any more.
        const again = await delegate(airline.key, delegation([uri], AGENT));
        expect(await statusOf(again, airline.key)).toBe("api:REQUEST_REJECTED");
      },
    );

    behaviourIt(
      "the operator's object:revoke withdraws what the grantee passed on, and revokes that delegation",
      async () => {
        const uri = await piece();
        const grants = createOperatorGrants(app.database.prisma, base);
        await grants.grant(idOf(uri), airline.organization, { mayPassOn: true });
        const passedOn = await delegate(airline.key, delegation([uri], AGENT));
        expect(await reads(uri, gha)).toEqual([200, 200, 200]);
        await grants.revoke(idOf(uri), airline.organization);
        expect(await reads(uri, gha)).toEqual([403, 403, 403]);
        expect(await statusOf(passedOn, airline.key)).toBe("api:REQUEST_REVOKED");
      },
    );

    (backend === "postgres" ? it : it.skip)(
      "a delegation asked while the requester's own access is being revoked waits for it, and is rejected",
      async () => {
        const uri = await piece();
        const toAirline = idOf(await delegate(holder, delegation([uri], airline.organization, PASSABLE)));
        const { prisma } = app.database;
        // A revocation of the airline's access, held open after it has withdrawn the grants.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let withdrawn!: () => void;
        const hasWithdrawn = new Promise<void>((resolve) => (withdrawn = resolve));
        const revocation = prisma.$transaction(
          async (tx) => {
            await lockDelegationObjects.rows(tx, { objectIds: [idOf(uri)], requester: "organization-test" });
            await revokeDelegation.rows(tx, { id: toAirline, revokedBy: "organization-test" });
            await withdrawDelegation.rows(tx, { delegationId: toAirline });
            withdrawn();
            await held;
          },
          { timeout: 30_000 },
        );
        await hasWithdrawn;
        const asking = delegate(airline.key, delegation([uri], AGENT));
        // Once the airline's request waits for the objects' lock, the revocation commits.
        for (;;) {
          const [{ waiting } = { waiting: 0n }] = await prisma.$queryRawUnsafe<Array<{ waiting: bigint }>>(
            "SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          );
          if (waiting > 0n) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        release();
        await revocation;
        const passedOn = await asking;
        expect(await statusOf(passedOn, airline.key)).toBe("api:REQUEST_REJECTED");
        expect(await reads(uri, gha)).toEqual([403, 403, 403]);
      },
    );

    behaviourIt(
      "an AWB's Shipment: a reader of the AWB delegates it to an Organization without events:read",
      async () => {
        const milestone = {
          awb: AWB,
          state: "DEP",
          timestamp: "2026-11-21T08:00:00Z",
          station: "FRA",
          flight: "LH8160",
        };
        const ingested = await postJson(`${app.url()}/carrier/handling/shipment/events`, milestone, {
          authorization: `Bearer ${ADMIN_KEY}`,
        });
        expect(ingested.status).toBe(202);
        const shipment = `${base}/logistics-objects/shipment-${AWB}`;
        expect((await oneRecord(shipment, { token: airline.key })).status).toBe(403);
        expect((await oneRecord(`${shipment}/logistics-events`, { token: airline.key })).status).toBe(403);
        const forwarder = await newClient("events:read");
        await delegate(forwarder.key, delegation([shipment], airline.organization));
        expect((await oneRecord(shipment, { token: airline.key })).status).toBe(200);
        const events = await oneRecord(`${shipment}/logistics-events`, { token: airline.key });
        expect(events.status).toBe(200);
        expect(events.body["api:hasTotalItems"]).toBeGreaterThanOrEqual(1);
        // Whose scopes do not open an AWB learns nothing of whether another AWB exists: 403, not 404.
        const unknown = `${base}/logistics-objects/shipment-020-00000011/logistics-events`;
        await expectDenied(await oneRecord(unknown, { token: airline.key }), 403);
        await expectDenied(await oneRecord(unknown, { token: forwarder.key }), 404);
      },
    );

    behaviourIt("a malformed delegation is refused (400) and stores nothing", async () => {
      const uri = await piece();
      const other = "https://1r.elsewhere.example/logistics-objects/1a8ded38-1804-467c-a369-81a411416b7c";
      const without = (key: string) => {
        const body: Record<string, unknown> = delegation([uri], airline.organization);
        delete body[key];
        return body;
      };
      const bodies: Array<[string, unknown]> = [
        ["api:AccessDelegation", { ...delegation([uri], airline.organization), "@type": "api:Subscription" }],
        ["api:hasLogisticsObject", without("api:hasLogisticsObject")],
        ["api:hasLogisticsObject", delegation([other], airline.organization)],
        ["api:hasLogisticsObject", delegation([`${base}/logistics-objects/no-such-object`], airline.organization)],
        [
          "api:hasLogisticsObject",
          delegation(
            Array.from({ length: MAX_DELEGATED_OBJECTS + 1 }, (_, i) => `${uri}-${i}`),
            airline.organization,
          ),
        ],
        ["api:isRequestedFor", without("api:isRequestedFor")],
        [
          "api:isRequestedFor",
          delegation([uri], airline.organization, {
            "api:isRequestedFor": [{ "@id": airline.organization }, { "@id": AGENT }],
          }),
        ],
        ["api:isRequestedFor", delegation([uri], `${base}/logistics-objects/organization-carrier`)],
        ["api:hasPermission", without("api:hasPermission")],
        [
          "api:hasPermission",
          delegation([uri], airline.organization, { "api:hasPermission": { "@id": "api:DELETE_EVERYTHING" } }),
        ],
        [
          "api:notifyRequestStatusChange",
          delegation([uri], airline.organization, { "api:notifyRequestStatusChange": "yes" }),
        ],
        ["api:expiresAt", delegation([uri], airline.organization, { "api:expiresAt": "tomorrow" })],
        ["api:hasDescription", delegation([uri], airline.organization, { "api:hasDescription": "x".repeat(1_001) })],
        [
          "api:isRequestedBy",
          delegation([uri], airline.organization, { "api:isRequestedBy": { "@id": airline.organization } }),
        ],
      ];
      const before = await app.database.prisma.oneRecordAccessDelegation.count();
      for (const [property, body] of bodies) {
        const res = await oneRecord(`${base}/access-delegations`, { token: holder, body });
        await expectDenied(res, 400);
        const named = (res.body["api:hasErrorDetail"] as unknown[]).flat().map((d: any) => d["api:hasProperty"]);
        expect({ property, named }).toEqual({
          property,
          named: expect.arrayContaining([`${API}${property.slice(4)}`]),
        });
      }
      await expectDenied(await oneRecord(`${base}/access-delegations`, { token: holder, body: "{" }), 400);
      await expectDenied(
        await oneRecord(`${base}/access-delegations`, {
          token: holder,
          body: delegation([uri], airline.organization),
          contentType: "application/json",
        }),
        415,
      );
      await expectDenied(
        await oneRecord(`${base}/access-delegations`, { body: delegation([uri], airline.organization) }),
        401,
      );
      expect(await app.database.prisma.oneRecordAccessDelegation.count()).toBe(before);
      expect(await grantsOf(uri)).toEqual([]);
    });

    behaviourIt(
      "notifyRequestStatusChange queues the requester's ACCESS_DELEGATION_REQUEST_* notifications to its registered server only",
      async () => {
        // An agent of another server: its notifications go to its registered server's /notifications, and
        // without one nowhere (not to the server its URI names).
        const forwarder = "https://1r.forwarder.example/logistics-objects/organization-forwarder";
        const token = await issuer.token({ logistics_agent_uri: forwarder, scope: "objects:write" });
        const created = await oneRecord(`${base}/logistics-objects`, {
          token,
          body: { "@context": CONTEXT, "@type": "cargo:Piece" },
        });
        const uri = created.headers.get("location")!;
        const unregistered = await delegate(token, delegation([uri], AGENT, { "api:notifyRequestStatusChange": true }));
        expect((await oneRecord(unregistered, { token, method: "DELETE" })).status).toBe(204);
        expect(
          await app.database.prisma.delivery.count({
            where: { kind: "ONE_RECORD", payload: { contains: unregistered } },
          }),
        ).toBe(0);
        await createPartnerAdmin(app.database.prisma, base).add({
          serverUrl: "https://notify.forwarder.example/1r",
          agentUri: forwarder,
        });
        const request = await delegate(token, delegation([uri], AGENT, { "api:notifyRequestStatusChange": true }));
        expect((await oneRecord(request, { token, method: "DELETE" })).status).toBe(204);
        const queued = await app.database.prisma.delivery.findMany({
          where: { kind: "ONE_RECORD", callback: "https://notify.forwarder.example/1r/notifications" },
          orderBy: { createdAt: "asc" },
        });
        const bodies = queued.map((d) => JSON.parse(d.payload));
        expect(bodies.map((b) => b["api:hasEventType"]["@id"])).toEqual([
          "api:ACCESS_DELEGATION_REQUEST_ACCEPTED",
          "api:ACCESS_DELEGATION_REQUEST_REVOKED",
        ]);
        for (const body of bodies) {
          expect(body).toMatchObject({
            "api:hasLogisticsObject": { "@id": uri },
            "api:hasLogisticsObjectType": { "@value": "https://onerecord.iata.org/ns/cargo#Piece" },
            "api:isTriggeredBy": { "@id": request },
          });
          await assertConforms(body);
        }
        expect(queued.every((d) => d.oneRecordSubscriptionId === null && d.clientId === null)).toBe(true);
      },
    );
  });
});
