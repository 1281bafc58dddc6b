import { randomUUID } from "node:crypto";
import type { Database } from "../../src/db/database";
import type { AppError } from "../../src/errors";
import { createObjectGrantStore } from "../../src/onerecord/identity/object-grants.store";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import { CARRIER_ORGANIZATION_ID } from "../../src/onerecord/identity/organizations";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers } from "../support/harness";
import { openTestDatabase } from "../support/test-database";

/** Grants the operator makes on a creator's behalf (npm run admin -- object:grant / object:revoke). */
const BASE_URL = "https://1r.carrier.example/onerecord";

describe.each(BEHAVIOUR_BACKENDS)("operator grants on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    const objectOf = async (createdBy: string): Promise<string> => {
      const id = randomUUID();
      const type = "https://onerecord.iata.org/ns/cargo#Piece";
      await db.prisma.logisticsObject.create({
        data: { id, type, types: [type], body: { "@id": id }, revision: 1, createdBy },
      });
      return id;
    };
    const readers = async (id: string) => (await createObjectGrantStore(db.prisma).readersOf([id])).get(id) ?? [];
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => e as AppError,
      );

    it("grants on the creator's behalf: a client by its id or its URI here, an agent by its URI; and withdraws", async () => {
      const grants = createOperatorGrants(db.prisma, BASE_URL);
      const id = await objectOf("organization-creator");
      const agent = "https://1r.forwarder.example/logistics-objects/agent-7";
      expect(await grants.grant(id, "organization-b")).toBe("organization-b");
      expect(await grants.grant(id, `${BASE_URL}/logistics-objects/organization-c`)).toBe("organization-c");
      expect(await grants.grant(id, agent)).toBe(agent);
      expect([...(await readers(id))].sort()).toEqual([agent, "organization-b", "organization-c"].sort());
      const granted = await db.prisma.logisticsObjectGrant.findMany({ where: { objectId: id } });
      expect(new Set(granted.map((g) => g.grantedBy))).toEqual(new Set(["organization-creator"]));
      await grants.revoke(id, "organization-b");
      expect([...(await readers(id))].sort()).toEqual([agent, "organization-c"].sort());
    });

    it("without ONE_RECORD_BASE_URL, takes a URI as it is", async () => {
      const id = await objectOf("organization-creator");
      const uri = `${BASE_URL}/logistics-objects/organization-c`;
      expect(await createOperatorGrants(db.prisma, undefined).grant(id, uri)).toBe(uri);
    });

    it("refuses an unknown object and the carrier's own objects", async () => {
      const grants = createOperatorGrants(db.prisma, BASE_URL);
      expect((await failure(grants.grant(randomUUID(), "organization-b")))?.code).toBe("NOT_FOUND");
      const carriers = await objectOf(CARRIER_ORGANIZATION_ID);
      const refused = await failure(grants.grant(carriers, "organization-b"));
      expect(refused?.code).toBe("VALIDATION_FAILED");
      expect(refused?.message).toMatch(/is the carrier's/);
      expect(await readers(carriers)).toEqual([]);
    });
  });
});
