import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

/**
 * A milestone's transportMovementReference resolves: the flight's TransportMovement is reference data,
 * answered from its id (docs/ONE-RECORD.md "Logistics objects").
 */
const AWB = "020-55500023";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record transport movements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let readerKey: string;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${app.url()}/onerecord`;
      const reader = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      readerKey = (await app.services.clients.issueKey(reader.clientId, ["events:read"])).key;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    it("answers the TransportMovement a milestone links to: 200, conforming, the flight as transportIdentifier, read-only (403)", async () => {
      const at = new Date("2026-11-25T09:30:00Z");
      await app.services.milestones.ingest(
        [
          {
            eventId: null,
            awb: AWB,
            state: "DEP",
            occurredAt: at,
            toaTimestamp: null,
            station: "FRA",
            flight: "LH8160",
          },
        ],
        at,
      );
      const events = await oneRecord(`${base}/logistics-objects/shipment-${AWB}/logistics-events`, {
        token: readerKey,
      });
      expect(events.status).toBe(200);
      const [event] = [events.body["api:hasItem"]].flat();
      const movementUri = event["cargo:transportMovementReference"]["@id"] as string;
      expect(movementUri).toBe(`${base}/logistics-objects/transport-movement-lh8160-2026-11-25`);

      const movement = await oneRecord(movementUri, { token: readerKey });
      expect(movement.status).toBe(200);
      expect(movement.headers.get("type")).toBe("https://onerecord.iata.org/ns/cargo#TransportMovement");
      expect(movement.body).toMatchObject({
        "@id": movementUri,
        "@type": "cargo:TransportMovement",
        "cargo:transportIdentifier": "LH8160",
      });
      await assertConforms(movement.body);

      // Reference data: no change is taken, from the carrier's own key either.
      const patched = await oneRecord(movementUri, {
        method: "PATCH",
        token: ADMIN_KEY,
        body: {
          "@context": { api: "https://onerecord.iata.org/ns/api#", xsd: "http://www.w3.org/2001/XMLSchema#" },
          "@type": "api:Change",
          "api:hasLogisticsObject": { "@id": movementUri },
          "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "1" },
          "api:hasOperation": {
            "@type": "api:Operation",
            "api:op": { "@id": "api:ADD" },
            "api:s": movementUri,
            "api:p": "https://onerecord.iata.org/ns/cargo#fuelType",
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": "http://www.w3.org/2001/XMLSchema#string",
              "api:hasValue": "SAF",
            },
          },
        },
      });
      expect(patched.status).toBe(403);
      await assertConforms(patched.body);
    });

    it("answers 404 for a malformed transport movement id, and refuses creating one (its id is reserved)", async () => {
      for (const id of [
        "transport-movement-lh8160-2026-02-30",
        "transport-movement-lh8160-2026-1-25",
        "transport-movement-l-2026-11-25",
        "transport-movement--2026-11-25",
      ]) {
        const res = await oneRecord(`${base}/logistics-objects/${id}`, { token: readerKey });
        expect([id, res.status]).toEqual([id, 404]);
        await assertConforms(res.body);
      }
      const claimed = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: {
          "@context": { cargo: "https://onerecord.iata.org/ns/cargo#" },
          "@id": `${base}/logistics-objects/transport-movement-lh1-2030-01-01`,
          "@type": "cargo:TransportMovement",
        },
      });
      expect(claimed.status).toBe(400);
    });
  });
});
