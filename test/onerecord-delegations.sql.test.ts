import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { lockDelegationObjects } from "../src/onerecord/sql/delegation-objects-lock.sql";
import { lockRequester } from "../src/onerecord/sql/requester-lock.sql";
import { grantDelegation } from "../src/onerecord/sql/delegation-grant.sql";
import { insertDelegation } from "../src/onerecord/sql/delegation-insert.sql";
import { readDelegation } from "../src/onerecord/sql/delegation-read.sql";
import { revokeDelegation } from "../src/onerecord/sql/delegation-revoke.sql";
import { withdrawDelegation } from "../src/onerecord/sql/delegation-withdraw.sql";
import { revokeChainedDelegations } from "../src/onerecord/sql/delegations-chain-revoke.sql";
import { delegationsRejectedRecently } from "../src/onerecord/sql/delegations-rejected-recently.sql";
import { grantRead as grantReadStatement } from "../src/onerecord/sql/grant-read.sql";
import { readObject } from "../src/onerecord/sql/object-read.sql";
import { readObjectAs } from "../src/onerecord/sql/object-read-as.sql";
import { delegatedObjectsHeld } from "../src/onerecord/sql/delegations-held.sql";
import { endedGrantObjects, withdrawEndedGrants } from "../src/onerecord/sql/grants-ended-withdraw.sql";
import { readersOf } from "../src/onerecord/sql/readers-of.sql";
import { revokeRead } from "../src/onerecord/sql/revoke-read.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { openTestDatabase } from "./support/test-database";
import { until } from "./support/webhooks";

/**
 * The access delegations' statements (docs/ONE-RECORD.md "Access delegations") on both databases:
 * expired grants grant nothing, a delegation's grants expire with it and never outlast the requester's
 * own, revocation withdraws the trust chain, and the chained delegations left without grants are revoked.
 */
const PIECE = "https://onerecord.iata.org/ns/cargo#Piece";
const CREATOR = "organization-creator";
const AIRLINE = "https://1r.airline.example/logistics-objects/airline";
const GHA = "https://1r.gha.example/logistics-objects/gha";
const TRUCKER = "organization-trucker";
const PAST = new Date(Date.now() - 3_600_000);
const FUTURE = new Date(Date.now() + 3_600_000);
const LATER = new Date(Date.now() + 7_200_000);

describe.each(BACKENDS)("access delegation statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    const objectOf = async (createdBy = CREATOR): Promise<string> => {
      const id = randomUUID();
      await db.prisma.logisticsObject.create({
        data: { id, type: PIECE, types: [PIECE], body: { "@id": id }, revision: 1, createdBy },
      });
      return id;
    };
    const grants = (objectId: string) =>
      db.prisma.logisticsObjectGrant.findMany({ where: { objectId }, orderBy: { organizationId: "asc" } });
    /** An accepted delegation row, as the service stores one. */
    const delegation = async (requestedBy: string, objects: string[], organization: string) =>
      (
        await insertDelegation.rows(db.prisma, {
          id: randomUUID(),
          status: "REQUEST_ACCEPTED",
          requestedBy,
          decidedBy: "organization-carrier",
          reason: null,
          errorStatus: null,
          delegation: JSON.stringify({ "@type": ["https://onerecord.iata.org/ns/api#AccessDelegation"] }),
          objects,
          organizations: [organization],
          permissions: ["GET_LOGISTICS_OBJECT"],
          expiresAt: null,
          notifyStatusChange: true,
        })
      )[0]!;
    const grant = (
      delegationId: string,
      objectIds: string[],
      organizationId: string,
      grantedBy: string,
      expiresAt: Date | null = null,
      more: { mayPassOn?: boolean; scopeObjectIds?: string[]; grantedWithKey?: string; scopeExpiresAt?: Date } = {},
    ) =>
      grantDelegation.rows(db.prisma, {
        delegationId,
        objectIds,
        organizationId,
        grantedBy,
        expiresAt,
        mayPassOn: more.mayPassOn ?? false,
        scopeObjectIds: more.scopeObjectIds ?? [],
        grantedWithKey: more.grantedWithKey ?? null,
        scopeExpiresAt: more.scopeExpiresAt ?? null,
      });
    const grantRead = (objectId: string, organizationId: string, grantedBy: string, mayPassOn = false) =>
      grantReadStatement.rows(db.prisma, { objectId, organizationId, grantedBy, mayPassOn });

    it("delegation-insert stores a decided request, delegation-read answers it, on the raw driver too", async () => {
      const id = await objectOf();
      const row = await delegation(CREATOR, [id], AIRLINE);
      expect(row).toMatchObject({
        status: "REQUEST_ACCEPTED",
        requested_by: CREATOR,
        decided_by: "organization-carrier",
        objects: [id],
        organizations: [AIRLINE],
        permissions: ["GET_LOGISTICS_OBJECT"],
        expires_at: null,
        notify_status_change: true,
      });
      expect(row.decided_at).toEqual(row.requested_at);
      expect(await readDelegation.rows(db.prisma, { id: row.id })).toEqual([row]);
      expect(await readDelegation.rows(db.sql, { id: row.id })).toEqual([row]);
      expect(await readDelegation.rows(db.prisma, { id: randomUUID() })).toEqual([]);
    });

    it("delegations-rejected-recently counts a requester's delegations rejected in the last 24 hours only", async () => {
      const requester = `organization-${randomUUID()}`;
      const rejected = async (requestedAt?: Date) => {
        const [row] = await insertDelegation.rows(db.prisma, {
          id: randomUUID(),
          status: "REQUEST_REJECTED",
          requestedBy: requester,
          decidedBy: "organization-carrier",
          reason: "no",
          errorStatus: 403,
          delegation: "{}",
          objects: ["piece-x"],
          organizations: [AIRLINE],
          permissions: ["GET_LOGISTICS_OBJECT"],
          expiresAt: null,
          notifyStatusChange: false,
        });
        if (requestedAt)
          await db.prisma.oneRecordAccessDelegation.update({ where: { id: row!.id }, data: { requestedAt } });
      };
      await rejected();
      await rejected();
      await rejected(new Date(Date.now() - 25 * 3_600_000));
      await delegation(requester, [await objectOf()], AIRLINE);
      expect(await delegationsRejectedRecently.rows(db.prisma, { requestedBy: requester })).toEqual([{ n: 2 }]);
      expect(await delegationsRejectedRecently.rows(db.sql, { requestedBy: "organization-nobody" })).toEqual([
        { n: 0 },
      ]);
    });

    it("readers-of, object-read(-as) and delegation-objects-lock leave out expired grants", async () => {
      const id = await objectOf();
      const row = await delegation(CREATOR, [id], AIRLINE);
      await grant(row.id, [id], AIRLINE, CREATOR, FUTURE);
      await grant(row.id, [id], GHA, CREATOR, FUTURE);
      await db.prisma.logisticsObjectGrant.updateMany({
        where: { objectId: id, organizationId: GHA },
        data: { expiresAt: PAST },
      });
      expect(await readersOf.rows(db.prisma, { objectIds: [id] })).toEqual([
        { object_id: id, organization_id: AIRLINE },
      ]);
      expect(await readersOf.rows(db.sql, { objectIds: [id] })).toEqual([{ object_id: id, organization_id: AIRLINE }]);
      expect((await readObject.rows(db.prisma, { id }))[0]).toMatchObject({ readers: [AIRLINE], delegates: [AIRLINE] });
      await grantRead(id, TRUCKER, CREATOR);
      expect((await readObject.rows(db.sql, { id }))[0]).toMatchObject({
        readers: [AIRLINE, TRUCKER],
        delegates: [AIRLINE],
      });
      // One reader's grants only: its own, and nobody else's.
      expect((await readObjectAs.rows(db.sql, { id, reader: AIRLINE }))[0]).toMatchObject({
        readers: [AIRLINE],
        delegates: [AIRLINE],
      });
      expect((await readObjectAs.rows(db.prisma, { id, reader: TRUCKER }))[0]).toMatchObject({
        readers: [TRUCKER],
        delegates: [],
      });
      expect((await readObjectAs.rows(db.prisma, { id, reader: GHA }))[0]).toMatchObject({
        readers: [],
        delegates: [],
      });
      const lock = (requester: string) =>
        db.prisma.$transaction((tx) => lockDelegationObjects.rows(tx, { objectIds: [id, "none"], requester }));
      const object = { id, type: PIECE, awb: null, created_by: CREATOR };
      // The creator's two delegation grants count (the expired one too), not its own grant to the trucker.
      expect(await lock(CREATOR)).toEqual([{ ...object, requester_may_pass_on: null, delegated_by_requester: 2 }]);
      expect(await lock(AIRLINE)).toEqual([{ ...object, requester_may_pass_on: false, delegated_by_requester: 0 }]);
      expect(await lock(GHA)).toEqual([{ ...object, requester_may_pass_on: null, delegated_by_requester: 0 }]);
    });

    it("a grant made on an API key's scope grants nothing once the key is revoked or deleted", async () => {
      const id = await objectOf();
      const { id: clientId } = await db.prisma.client.create({
        data: { name: "forwarder", callbackPrefixes: [], signingSecret: "sealed" },
      });
      const key = async () =>
        (
          await db.prisma.apiKey.create({
            data: { clientId, lookupPrefix: randomUUID().slice(0, 16), keyHash: "x", scopes: ["events:read"] },
          })
        ).id;
      const [revoked, deleted, kept] = [await key(), await key(), await key()];
      for (const [delegate, keyId] of [
        [AIRLINE, revoked],
        [GHA, deleted],
        [TRUCKER, kept],
      ] as const) {
        const row = await delegation("organization-forwarder", [id], delegate);
        await grant(row.id, [id], delegate, "organization-forwarder", null, {
          scopeObjectIds: [id],
          grantedWithKey: keyId,
        });
      }
      const readers = async () => (await readersOf.rows(db.sql, { objectIds: [id] })).map((r) => r.organization_id);
      expect(await readers()).toEqual([AIRLINE, GHA, TRUCKER].sort());
      await db.prisma.apiKey.update({ where: { id: revoked }, data: { revokedAt: new Date() } });
      await db.prisma.apiKey.delete({ where: { id: deleted } });
      expect(await readers()).toEqual([TRUCKER]);
      expect((await readObjectAs.rows(db.prisma, { id, reader: AIRLINE }))[0]!.readers).toEqual([]);
      // grants-ended finds the revoked key's grant through the client's keys (a deleted key's, no more).
      expect(
        await endedGrantObjects.rows(db.prisma, { grantedBy: "organization-forwarder", clientId, limit: 10 }),
      ).toEqual([{ object_id: id }]);
      // A new delegation replaces a grant that ended so; objects read by other means get no key.
      const other = await objectOf();
      const renewed = await delegation("organization-forwarder", [id, other], AIRLINE);
      await grant(renewed.id, [id, other], AIRLINE, "organization-forwarder", null, {
        scopeObjectIds: [id],
        grantedWithKey: kept,
      });
      expect((await grants(id)).find((g) => g.organizationId === AIRLINE)).toMatchObject({
        delegationId: renewed.id,
        grantedWithKey: kept,
      });
      expect((await grants(other))[0]).toMatchObject({ grantedWithKey: null, mayPassOn: false });
    });

    it("delegation-grant ends an agent's scope-based grant with its token, and marks what may be passed on", async () => {
      const [scoped, held] = [await objectOf(), await objectOf()];
      const row = await delegation(AIRLINE, [scoped, held], GHA);
      await grant(row.id, [scoped, held], GHA, AIRLINE, LATER, {
        scopeObjectIds: [scoped],
        scopeExpiresAt: FUTURE,
        mayPassOn: true,
      });
      expect((await grants(scoped))[0]).toMatchObject({ expiresAt: FUTURE, mayPassOn: true, grantedWithKey: null });
      expect((await grants(held))[0]).toMatchObject({ expiresAt: LATER, mayPassOn: true });
    });

    it("grants-ended finds and withdraws a grantor's ended grants only; delegations-held counts what it stored", async () => {
      const requester = `organization-${randomUUID()}`;
      const [a, b] = [await objectOf(), await objectOf()];
      const first = await delegation(requester, [a, b], AIRLINE);
      await grant(first.id, [a, b], AIRLINE, requester, FUTURE);
      const second = await delegation(requester, [a], GHA);
      await grant(second.id, [a], GHA, requester);
      expect(await endedGrantObjects.rows(db.prisma, { grantedBy: requester, clientId: null, limit: 10 })).toEqual([]);
      await db.prisma.logisticsObjectGrant.updateMany({
        where: { grantedBy: requester, organizationId: AIRLINE },
        data: { expiresAt: PAST },
      });
      const ended = await endedGrantObjects.rows(db.sql, { grantedBy: requester, clientId: null, limit: 1 });
      expect(ended).toEqual([{ object_id: [a, b].sort()[0] }]);
      const withdrawn = await withdrawEndedGrants.rows(db.prisma, { grantedBy: requester, objectIds: [a, b] });
      expect(withdrawn).toEqual([{ delegation_id: first.id }, { delegation_id: first.id }]);
      expect((await grants(a)).map((g) => g.organizationId)).toEqual([GHA]);
      expect(await delegatedObjectsHeld.rows(db.prisma, { requestedBy: requester })).toEqual([{ objects: 3 }]);
      await revokeDelegation.rows(db.prisma, { id: second.id, revokedBy: requester });
      expect(await delegatedObjectsHeld.rows(db.sql, { requestedBy: requester })).toEqual([{ objects: 3 }]);
      expect(await delegatedObjectsHeld.rows(db.sql, { requestedBy: "organization-nobody" })).toEqual([{ objects: 0 }]);
    });

    it("delegation-grant grants each object once, expiring no later than the requester's own grant", async () => {
      const [first, second] = [await objectOf(), await objectOf()];
      // The airline holds first until FUTURE, second for ever (the creator's grant).
      await grant((await delegation(CREATOR, [first], AIRLINE)).id, [first], AIRLINE, CREATOR, FUTURE);
      await grantRead(second, AIRLINE, CREATOR);
      const passed = await delegation(AIRLINE, [first, second], GHA);
      const granted = await grant(passed.id, [first, second, "none"], GHA, AIRLINE, LATER);
      expect(granted.map((g) => g.object_id).sort()).toEqual([first, second].sort());
      expect((await grants(first)).find((g) => g.organizationId === GHA)).toMatchObject({
        grantedBy: AIRLINE,
        delegationId: passed.id,
        expiresAt: FUTURE,
      });
      expect((await grants(second)).find((g) => g.organizationId === GHA)).toMatchObject({ expiresAt: LATER });
      // Again (another delegation for the same delegate): the active grant stays as it is.
      const again = await delegation(AIRLINE, [first], GHA);
      expect(await grant(again.id, [first], GHA, AIRLINE, null)).toEqual([]);
      expect((await grants(first)).find((g) => g.organizationId === GHA)?.delegationId).toBe(passed.id);
    });

    it("delegation-grant makes none to the creator or the requester itself, and replaces an expired grant", async () => {
      const id = await objectOf();
      const row = await delegation(AIRLINE, [id], CREATOR);
      expect(await grant(row.id, [id], CREATOR, AIRLINE)).toEqual([]);
      expect(await grant(row.id, [id], AIRLINE, AIRLINE)).toEqual([]);
      const old = await delegation(CREATOR, [id], GHA);
      await grant(old.id, [id], GHA, CREATOR, FUTURE);
      await db.prisma.logisticsObjectGrant.updateMany({ where: { objectId: id }, data: { expiresAt: PAST } });
      const renewed = await delegation(CREATOR, [id], GHA);
      expect(await grant(renewed.id, [id], GHA, CREATOR, null)).toEqual([{ object_id: id }]);
      expect(await grants(id)).toEqual([
        expect.objectContaining({ organizationId: GHA, delegationId: renewed.id, expiresAt: null }),
      ]);
    });

    it("delegation-revoke revokes an accepted delegation once", async () => {
      const id = await objectOf();
      const row = await delegation(CREATOR, [id], AIRLINE);
      const [revoked] = await revokeDelegation.rows(db.prisma, { id: row.id, revokedBy: AIRLINE });
      expect(revoked).toMatchObject({ status: "REQUEST_REVOKED", decided_by: AIRLINE });
      expect(await revokeDelegation.rows(db.prisma, { id: row.id, revokedBy: CREATOR })).toEqual([]);
    });

    it("delegation-withdraw deletes the delegation's grants and what its delegates passed on, not the creator's", async () => {
      const [piece, other] = [await objectOf(), await objectOf()];
      const toAirline = await delegation(CREATOR, [piece, other], AIRLINE);
      await grant(toAirline.id, [piece, other], AIRLINE, CREATOR);
      const toGha = await delegation(AIRLINE, [piece], GHA);
      await grant(toGha.id, [piece], GHA, AIRLINE);
      const toTrucker = await delegation(GHA, [piece], TRUCKER);
      await grant(toTrucker.id, [piece], TRUCKER, GHA);
      // The creator's own grant to the trucker on the other object, and what the creator passed on, stay.
      await grantRead(other, TRUCKER, CREATOR);
      const unrelated = await delegation(CREATOR, [piece], "organization-unrelated");
      await grant(unrelated.id, [piece], "organization-unrelated", CREATOR);

      const withdrawn = await db.prisma.$transaction((tx) =>
        withdrawDelegation.rows(tx, { delegationId: toAirline.id }),
      );
      expect(withdrawn).toEqual(
        [
          { object_id: piece, organization_id: AIRLINE, delegation_id: toAirline.id },
          { object_id: other, organization_id: AIRLINE, delegation_id: toAirline.id },
          { object_id: piece, organization_id: GHA, delegation_id: toGha.id },
          { object_id: piece, organization_id: TRUCKER, delegation_id: toTrucker.id },
        ].sort((a, b) => a.object_id.localeCompare(b.object_id) || a.organization_id.localeCompare(b.organization_id)),
      );
      expect((await grants(piece)).map((g) => g.organizationId)).toEqual(["organization-unrelated"]);
      expect((await grants(other)).map((g) => g.organizationId)).toEqual([TRUCKER]);

      // The chained delegations now grant nothing: revoked, with the reason; the first is the caller's to revoke.
      const chained = await revokeChainedDelegations.rows(db.prisma, {
        ids: [toAirline.id, toGha.id, toTrucker.id],
        revokedBy: CREATOR,
        reason: "withdrawn with the delegation",
      });
      expect(chained.map((row) => row.id).sort()).toEqual([toAirline.id, toGha.id, toTrucker.id].sort());
      expect(chained[0]).toMatchObject({
        status: "REQUEST_REVOKED",
        decided_by: CREATOR,
        reason: "withdrawn with the delegation",
      });
    });

    it("delegations-chain-revoke leaves accepted a delegation that still grants something", async () => {
      const [piece, other] = [await objectOf(), await objectOf()];
      const toAirline = await delegation(CREATOR, [piece], AIRLINE);
      await grant(toAirline.id, [piece], AIRLINE, CREATOR);
      // The airline passes on both objects; the other it reads by the creator's own grant.
      await grantRead(other, AIRLINE, CREATOR);
      const toGha = await delegation(AIRLINE, [piece, other], GHA);
      await grant(toGha.id, [piece, other], GHA, AIRLINE);
      const withdrawn = await withdrawDelegation.rows(db.prisma, { delegationId: toAirline.id });
      expect(withdrawn.map((g) => g.organization_id).sort()).toEqual([AIRLINE, GHA].sort());
      expect(
        await revokeChainedDelegations.rows(db.sql, { ids: [toGha.id], revokedBy: CREATOR, reason: "chain" }),
      ).toEqual([]);
      expect((await readDelegation.rows(db.prisma, { id: toGha.id }))[0]!.status).toBe("REQUEST_ACCEPTED");
      expect((await grants(other)).map((g) => g.organizationId).sort()).toEqual([AIRLINE, GHA].sort());
    });

    it("revoke-read withdraws the creator's grant with what the grantee passed on, answering those delegations", async () => {
      const id = await objectOf();
      await grantRead(id, AIRLINE, CREATOR);
      const toGha = await delegation(AIRLINE, [id], GHA);
      await grant(toGha.id, [id], GHA, AIRLINE);
      expect(
        await revokeRead.rows(db.prisma, { objectId: id, organizationId: AIRLINE, revokedBy: "organization-other" }),
      ).toEqual([{ created_by: CREATOR, delegation_ids: [] }]);
      expect(await grants(id)).toHaveLength(2);
      expect(await revokeRead.rows(db.prisma, { objectId: id, organizationId: AIRLINE, revokedBy: CREATOR })).toEqual([
        { created_by: CREATOR, delegation_ids: [toGha.id] },
      ]);
      expect(await grants(id)).toEqual([]);
    });

    it("grant-read makes the creator's grant of a delegated one: no expiry, no delegation", async () => {
      const id = await objectOf();
      const row = await delegation(CREATOR, [id], AIRLINE);
      await grant(row.id, [id], AIRLINE, CREATOR, FUTURE);
      await grantRead(id, AIRLINE, CREATOR);
      expect(await grants(id)).toEqual([
        expect.objectContaining({ organizationId: AIRLINE, grantedBy: CREATOR, delegationId: null, expiresAt: null }),
      ]);
      expect(await withdrawDelegation.rows(db.prisma, { delegationId: row.id })).toEqual([]);
    });

    it("requester-lock is taken in a transaction and let go when it ends", async () => {
      const take = () =>
        db.prisma.$transaction((tx) => lockRequester.affectedRows(tx, { requester: "organization-a" }));
      await take();
      // Let go at the end: the same requester takes it again at once.
      await take();
      const held = await db.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 7310027",
        [],
      );
      expect(held[0]!.n).toBe(0);
    });
  });
});

describeBackend("postgres")("requester-lock on a second connection", () => {
  const disposers = new Disposers();
  let db: Database;
  beforeAll(async () => {
    ({ database: db } = await openTestDatabase("postgres", disposers));
  });
  afterAll(() => disposers.disposeAll());

  it("makes a second transaction of the same requester wait until the first ends", async () => {
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstLocked!: () => void;
    const locked = new Promise<void>((resolve) => (firstLocked = resolve));
    const order: string[] = [];
    const first = db.prisma.$transaction(
      async (tx) => {
        await lockRequester.affectedRows(tx, { requester: "organization-same" });
        firstLocked();
        await firstHolds;
        order.push("first");
      },
      { timeout: 20_000 },
    );
    await locked;
    // Another requester's lock is free while the first holds its own.
    await db.prisma.$transaction((tx) => lockRequester.affectedRows(tx, { requester: "organization-other" }));
    order.push("other");
    const second = db.prisma.$transaction(
      async (tx) => {
        await lockRequester.affectedRows(tx, { requester: "organization-same" });
        order.push("second");
      },
      { timeout: 20_000 },
    );
    // Seen waiting in pg_locks, not after a delay.
    await until(
      async () =>
        (
          await db.sql.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
            [],
          )
        )[0]!.n > 0,
      { what: "the second transaction waiting on the requester's lock" },
    );
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["other", "first", "second"]);
  });
});
