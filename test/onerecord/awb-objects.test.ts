import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const CONTEXT = { cargo: CARGO };
let serial = 3_000_000 + (process.pid % 1000) * 100;
/** A fresh AWB, its check digit right. */
const nextAwb = () => {
  const n = String(++serial);
  return `020-${n}${Number(n) % 7}`;
};

describe.each(BEHAVIOUR_BACKENDS)("ONE Record objects of an AWB on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let readerKey: string;
    let subscriberKey: string;

    const milestone = async (awb: string) => {
      const res = await postJson(
        `${app.url()}/carrier/handling/shipment/events`,
        { awb, state: "RCS", station: "FRA", timestamp: "2026-11-20T08:00:00Z" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
    };
    const get = (uri: string, token = ADMIN_KEY) => oneRecord(uri, { token });
    const postWaybill = (body: unknown) => oneRecord(`${base}/logistics-objects`, { token: ADMIN_KEY, body });
    const waybill = (awb: string, extra: Record<string, unknown> = {}) => ({
      "@context": CONTEXT,
      "@type": "cargo:Waybill",
      "cargo:waybillPrefix": awb.slice(0, 3),
      "cargo:waybillNumber": awb.slice(4),
      "cargo:shippingInfo": "KEEP DRY",
      ...extra,
    });

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        // What applying a change does, not the decision: the holder's own changes apply at once.
        ONE_RECORD_APPLY_HOLDER_CHANGES: "true",
      }));
      base = `${app.url()}/onerecord`;
      const reader = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      readerKey = (await app.services.clients.issueKey(reader.clientId, ["events:read"])).key;
      const subscriber = await app.services.clients.createClient({ name: "subscriber", callbackPrefixes: ["*"] });
      subscriberKey = (await app.services.clients.issueKey(subscriber.clientId, ["subscriptions"])).key;
    });
    afterAll(() => disposers.disposeAll());

    it("finds a known AWB's Waybill from awb-<prefix>-<serial> (307), a MASTER skeleton linked to its Shipment", async () => {
      const awb = nextAwb();
      await milestone(awb);
      const alias = await get(`${base}/logistics-objects/awb-${awb}?embedded=true`, readerKey);
      expect(alias.status).toBe(307);
      expect(alias.headers.get("location")).toBe(`${base}/logistics-objects/waybill-${awb}?embedded=true`);

      const res = await get(`${base}/logistics-objects/waybill-${awb}`, readerKey);
      expect(res.status).toBe(200);
      expect(res.headers.get("type")).toBe(`${CARGO}Waybill`);
      expect(res.body).toMatchObject({
        "@id": `${base}/logistics-objects/waybill-${awb}`,
        "@type": "cargo:Waybill",
        "cargo:waybillType": { "@id": "cargo:MASTER" },
        "cargo:waybillPrefix": awb.slice(0, 3),
        "cargo:waybillNumber": awb.slice(4),
        "cargo:shipment": { "@id": `${base}/logistics-objects/shipment-${awb}` },
        "cargo:skeletonIndicator": true,
        "api:hasRevision": "1",
      });
      await assertConforms(res.body);
      const shipment = await get(`${base}/logistics-objects/shipment-${awb}`, readerKey);
      expect(shipment.body).toMatchObject({
        "@type": "cargo:Shipment",
        "cargo:waybill": { "@id": `${base}/logistics-objects/waybill-${awb}` },
      });
      await assertConforms(shipment.body);
      // Read again: the same skeleton, not a second one.
      expect((await get(`${base}/logistics-objects/waybill-${awb}`, readerKey)).headers.get("revision")).toBe("1");
      expect(await app.database.prisma.logisticsObject.count({ where: { awb } })).toBe(2);
    });

    it("answers 404 for an AWB the gateway does not know, and 403 to a key without events:read", async () => {
      const unknown = nextAwb();
      expect((await get(`${base}/logistics-objects/awb-${unknown}`)).status).toBe(404);
      expect((await get(`${base}/logistics-objects/waybill-${unknown}`)).status).toBe(404);
      expect((await get(`${base}/logistics-objects/shipment-${unknown}`)).status).toBe(404);
      expect(await app.database.prisma.logisticsObject.count({ where: { awb: unknown } })).toBe(0);
      const known = nextAwb();
      await milestone(known);
      const refused = await get(`${base}/logistics-objects/waybill-${known}`, subscriberKey);
      expect(refused.status).toBe(403);
      await assertConforms(refused.body);
    });

    it("completes the skeleton when the carrier posts the Waybill: the same URI, a new revision, the Shipment it embeds", async () => {
      const awb = nextAwb();
      await milestone(awb);
      await get(`${base}/logistics-objects/waybill-${awb}`);
      const res = await postWaybill(
        waybill(awb, { "cargo:shipment": { "@type": "cargo:Shipment", "cargo:goodsDescription": "SPARE PARTS" } }),
      );
      expect(res.status).toBe(201);
      expect(res.headers.get("location")).toBe(`${base}/logistics-objects/waybill-${awb}`);
      expect(res.headers.get("revision")).toBe("2");
      const completed = await get(`${base}/logistics-objects/waybill-${awb}`, readerKey);
      expect(completed.body).toMatchObject({
        "cargo:shippingInfo": "KEEP DRY",
        "cargo:waybillType": { "@id": "cargo:MASTER" },
        "cargo:shipment": { "@id": `${base}/logistics-objects/shipment-${awb}` },
        "api:hasRevision": "2",
      });
      expect(completed.body["cargo:skeletonIndicator"]).toBeUndefined();
      await assertConforms(completed.body);
      const shipment = await get(`${base}/logistics-objects/shipment-${awb}`, readerKey);
      expect(shipment.body).toMatchObject({
        "cargo:goodsDescription": "SPARE PARTS",
        "cargo:waybill": { "@id": `${base}/logistics-objects/waybill-${awb}` },
        "api:hasRevision": "2",
      });
      // The skeleton is still the first revision.
      const first = await app.database.prisma.logisticsObjectRevision.findUniqueOrThrow({
        where: { objectId_revision: { objectId: `waybill-${awb}`, revision: 1 } },
      });
      expect(first.body).toMatchObject({ [`${CARGO}skeletonIndicator`]: [{ "@value": true }] });
      // Described once: another POST is a conflict, a change goes through PATCH.
      const again = await postWaybill(waybill(awb));
      expect(again.status).toBe(409);
      expect(await app.database.prisma.logisticsObject.count({ where: { awb } })).toBe(2);
    });

    it("creates the AWB's objects when the carrier posts the Waybill first; the first milestone then keeps them", async () => {
      const awb = nextAwb();
      const res = await postWaybill(waybill(awb));
      expect([res.status, res.headers.get("location"), res.headers.get("revision")]).toEqual([
        201,
        `${base}/logistics-objects/waybill-${awb}`,
        "1",
      ]);
      await milestone(awb);
      const read = await get(`${base}/logistics-objects/awb-${awb}`);
      expect(read.status).toBe(307);
      const described = await get(`${base}/logistics-objects/waybill-${awb}`);
      expect([described.headers.get("revision"), described.body["cargo:shippingInfo"]]).toEqual(["1", "KEEP DRY"]);
      const shipment = await get(`${base}/logistics-objects/shipment-${awb}`);
      expect(shipment.body["cargo:skeletonIndicator"]).toBe(true);
    });

    it("refuses a Waybill that names a malformed AWB or links another Shipment", async () => {
      const bad = await postWaybill({ ...waybill("020-1234567X"), "cargo:waybillNumber": "1234" });
      expect(bad.status).toBe(400);
      expect(bad.body["api:hasErrorDetail"][0]["api:hasProperty"]).toBe(`${CARGO}waybillNumber`);
      await assertConforms(bad.body);
      const awb = nextAwb();
      const other = await postWaybill(
        waybill(awb, { "cargo:shipment": { "@id": `${base}/logistics-objects/elsewhere` } }),
      );
      expect(other.status).toBe(400);
      expect(await app.database.prisma.logisticsObject.count({ where: { awb } })).toBe(0);
    });

    it("takes changes to an AWB's Waybill from objects:write, as the holder's own systems", async () => {
      const awb = nextAwb();
      await milestone(awb);
      const uri = `${base}/logistics-objects/waybill-${awb}`;
      await get(uri);
      const change = {
        "@context": { cargo: CARGO, api: "https://onerecord.iata.org/ns/api#" },
        "@type": "api:Change",
        "api:hasLogisticsObject": { "@id": uri },
        "api:hasRevision": 1,
        "api:hasOperation": {
          "@type": "api:Operation",
          "api:op": { "@id": "api:ADD" },
          "api:s": uri,
          "api:p": `${CARGO}shippingInfo`,
          "api:o": {
            "@type": "api:OperationObject",
            "api:hasDatatype": "http://www.w3.org/2001/XMLSchema#string",
            "api:hasValue": "FRAGILE",
          },
        },
      };
      const res = await oneRecord(uri, { method: "PATCH", token: ADMIN_KEY, body: change });
      expect(res.status).toBe(201);
      const changed = await get(uri);
      expect([changed.headers.get("revision"), changed.body["cargo:shippingInfo"]]).toEqual(["2", "FRAGILE"]);
    });
  });
});
