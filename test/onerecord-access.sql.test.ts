import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { createObjectGrantStore, type ObjectGrantStore } from "../src/onerecord/identity/object-grants.store";
import { grantRead } from "../src/onerecord/sql/grant-read.sql";
import { readersOf } from "../src/onerecord/sql/readers-of.sql";
import { revokeRead } from "../src/onerecord/sql/revoke-read.sql";
import type { AppError } from "../src/errors";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { openTestDatabase } from "./support/test-database";

/** The statements and store of logistics_object_grant, on both databases. */
describe.each(BACKENDS)("object grants on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let grants: ObjectGrantStore;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      grants = createObjectGrantStore(db.prisma);
    });
    afterAll(() => disposers.disposeAll());

    const CREATOR = "organization-creator";
    const objectOf = async (createdBy = CREATOR): Promise<string> => {
      const id = randomUUID();
      await db.prisma.logisticsObject.create({
        data: {
          id,
          type: "https://onerecord.iata.org/ns/cargo#Piece",
          types: ["https://onerecord.iata.org/ns/cargo#Piece"],
          body: { "@id": id },
          revision: 1,
          createdBy,
        },
      });
      return id;
    };
    const stored = (objectId: string) =>
      db.prisma.logisticsObjectGrant.findMany({ where: { objectId }, orderBy: { organizationId: "asc" } });

    it("grant-read inserts a grant by the creator once, and answers the object's creator", async () => {
      const id = await objectOf();
      for (let i = 0; i < 2; i++)
        expect(
          await grantRead.rows(db.prisma, {
            objectId: id,
            organizationId: "organization-b",
            grantedBy: CREATOR,
            mayPassOn: false,
          }),
        ).toEqual([{ created_by: CREATOR }]);
      expect(await stored(id)).toEqual([
        expect.objectContaining({ objectId: id, organizationId: "organization-b", grantedBy: CREATOR }),
      ]);
    });

    it("grant-read by another than the creator inserts nothing; of no object, answers no row", async () => {
      const id = await objectOf();
      expect(
        await grantRead.rows(db.prisma, {
          objectId: id,
          organizationId: "organization-b",
          grantedBy: "organization-b",
          mayPassOn: false,
        }),
      ).toEqual([{ created_by: CREATOR }]);
      expect(await stored(id)).toEqual([]);
      expect(
        await grantRead.rows(db.prisma, {
          objectId: randomUUID(),
          organizationId: "organization-b",
          grantedBy: CREATOR,
          mayPassOn: false,
        }),
      ).toEqual([]);
    });

    it("revoke-read deletes the grant for the creator only", async () => {
      const id = await objectOf();
      await grantRead.rows(db.prisma, {
        objectId: id,
        organizationId: "organization-b",
        grantedBy: CREATOR,
        mayPassOn: false,
      });
      await revokeRead.rows(db.prisma, { objectId: id, organizationId: "organization-b", revokedBy: "organization-b" });
      expect(await stored(id)).toHaveLength(1);
      expect(
        await revokeRead.rows(db.prisma, { objectId: id, organizationId: "organization-b", revokedBy: CREATOR }),
      ).toEqual([{ created_by: CREATOR, delegation_ids: [] }]);
      expect(await stored(id)).toEqual([]);
    });

    it("readers-of answers each object's grantees, in order, on the raw driver too", async () => {
      const [first, second, none] = [await objectOf(), await objectOf(), await objectOf()];
      for (const [objectId, organizationId] of [
        [first, "organization-c"],
        [first, "https://1r.forwarder.example/logistics-objects/agent"],
        [second, "organization-b"],
      ] as const)
        await grantRead.rows(db.prisma, { objectId, organizationId, grantedBy: CREATOR, mayPassOn: false });
      const expected = [
        { object_id: first, organization_id: "https://1r.forwarder.example/logistics-objects/agent" },
        { object_id: first, organization_id: "organization-c" },
        { object_id: second, organization_id: "organization-b" },
      ].sort((a, b) => a.object_id.localeCompare(b.object_id) || a.organization_id.localeCompare(b.organization_id));
      expect(await readersOf.rows(db.prisma, { objectIds: [first, second, none] })).toEqual(expected);
      expect(await readersOf.rows(db.sql, { objectIds: [first, second, none] })).toEqual(expected);
    });

    it("the store refuses a grant by another than the creator (403) and of an unknown object (404)", async () => {
      const id = await objectOf();
      const failure = (promise: Promise<void>) =>
        promise.then(
          () => undefined,
          (e: unknown) => e as AppError,
        );
      expect((await failure(grants.grantRead(id, "organization-b", "organization-b")))?.code).toBe("ACCESS_DENIED");
      expect((await failure(grants.revokeRead(id, "organization-b", "organization-b")))?.code).toBe("ACCESS_DENIED");
      expect((await failure(grants.grantRead(randomUUID(), "organization-b", CREATOR)))?.code).toBe("NOT_FOUND");
      await grants.grantRead(id, "organization-b", CREATOR);
      expect(await grants.readersOf([id])).toEqual(new Map([[id, ["organization-b"]]]));
      await grants.revokeRead(id, "organization-b", CREATOR);
      expect(await grants.readersOf([id])).toEqual(new Map());
    });
  });
});
