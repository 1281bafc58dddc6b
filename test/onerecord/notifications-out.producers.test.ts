import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const API = "https://onerecord.iata.org/ns/api#";
const ANY_URI = "http://www.w3.org/2001/XMLSchema#anyURI";
const SHIPMENT = `${CARGO}Shipment`;
const WAYBILL = `${CARGO}Waybill`;
const PIECE = `${CARGO}Piece`;
const ENDPOINT = "http://subscriber.test/1r/notifications";
let serial = 5_000_000 + (process.pid % 1000) * 100;
/** A fresh AWB, its check digit right. */
const nextAwb = () => {
  const n = String(++serial);
  return `020-${n}${Number(n) % 7}`;
};

type Body = Record<string, any>;

/** The items of a Collection as a list, whatever the count. */
const itemsOf = (collection: Body): Body[] => [collection["api:hasItem"] ?? []].flat();

/**
 * What queues ONE Record notifications (docs/ONE-RECORD.md "What is notified"): the outbox rows each
 * producer writes in its own transaction, on both databases. The delivery worker is off, so every
 * queued row stays as it was written.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications queued on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    /** A forwarder's client that reads AWBs (events:read), and its Organization. */
    let reader: { clientId: string; key: string; organization: string };
    /** A client that may not read AWBs. */
    let outsider: { clientId: string; key: string; organization: string };
    /** The carrier's system: creates and changes objects. */
    let writer: { clientId: string; key: string; organization: string };

    const client = async (name: string, scopes: string[]) => {
      const created = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(created.clientId, scopes);
      return { clientId: created.clientId, key, organization: `organization-${created.clientId}` };
    };

    /** A ONE Record subscription as the subscriptions part stores an accepted one. */
    const subscribe = async (
      of: { clientId: string | null; organization: string },
      topicType: "LOGISTICS_OBJECT_IDENTIFIER" | "LOGISTICS_OBJECT_TYPE",
      topic: string,
      eventTypes: string[],
      more: { sendBody?: boolean; agentScopes?: string[] } = {},
    ): Promise<string> =>
      (
        await app.database.prisma.oneRecordSubscription.create({
          data: {
            status: "REQUEST_ACCEPTED",
            initiatedBy: "SUBSCRIBER",
            requestedBy: of.organization,
            subscription: {},
            subscriber: of.organization,
            topicType,
            topic,
            awb: null,
            eventTypes,
            sendBody: more.sendBody ?? false,
            endpoint: ENDPOINT,
            origin: "http://subscriber.test:80",
            clientId: of.clientId,
            ...(more.agentScopes ? { agentScopes: more.agentScopes } : {}),
          },
        })
      ).id;

    const milestone = async (awb: string, state = "RCS", eventId?: string) => {
      const res = await postJson(
        `${app.url()}/carrier/handling/shipment/events`,
        { awb, state, station: "FRA", timestamp: "2026-11-20T08:00:00Z", ...(eventId ? { eventId } : {}) },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
    };

    /** Ingests an FSU message as the carrier's systems send it. */
    const sendFsu = async (text: string) => {
      const res = await fetch(`${app.url()}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "text/plain" },
        body: text,
      });
      expect(res.status).toBe(202);
    };

    const notificationsTo = async (subscriptionId: string) => {
      const rows = await app.database.prisma.delivery.findMany({
        where: { oneRecordSubscriptionId: subscriptionId },
        orderBy: { createdAt: "asc" },
      });
      return rows.map((r) => ({ ...r, body: JSON.parse(r.payload) as Body }));
    };

    const eventIdsOf = async (awb: string) =>
      (await app.database.prisma.statusEvent.findMany({ where: { awb }, orderBy: { position: "asc" } })).map(
        (e) => e.id,
      );

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        // What applying a change does, not the decision: the holder's own changes apply at once.
        ONE_RECORD_APPLY_HOLDER_CHANGES: "true",
        DELIVERY_WORKER: "false",
      }));
      base = `${app.url()}/onerecord`;
      reader = await client("forwarder", ["events:read"]);
      outsider = await client("outsider", ["subscriptions"]);
      writer = await client("carrier system", ["objects:write", "events:read", "events:write"]);
    });
    afterAll(() => disposers.disposeAll());

    it("a milestone: LOGISTICS_EVENT_RECEIVED to the Shipment's subscriptions, naming the event as it is served", async () => {
      const awb = nextAwb();
      const byId = await subscribe(reader, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${awb}`, [
        "LOGISTICS_EVENT_RECEIVED",
      ]);
      const otherAwb = await subscribe(reader, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${nextAwb()}`, [
        "LOGISTICS_EVENT_RECEIVED",
      ]);
      await milestone(awb, "RCS");
      await milestone(awb, "DEP");
      const [rcs, dep] = await eventIdsOf(awb);
      const sent = await notificationsTo(byId);
      expect(sent.map((d) => [d.kind, d.eventId, d.clientId, d.callback, d.origin, d.status])).toEqual([
        ["ONE_RECORD", rcs, reader.clientId, ENDPOINT, "http://subscriber.test:80", "PENDING"],
        ["ONE_RECORD", dep, reader.clientId, ENDPOINT, "http://subscriber.test:80", "PENDING"],
      ]);
      const shipmentUri = `${base}/logistics-objects/shipment-${awb}`;
      expect(sent[0]!.body).toEqual({
        "@context": { api: API, cargo: CARGO },
        "@type": "api:Notification",
        "api:hasEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
        "api:hasLogisticsObject": { "@id": shipmentUri },
        "api:hasLogisticsObjectType": { "@type": ANY_URI, "@value": SHIPMENT },
        "api:hasLogisticsEvent": { "@id": `${shipmentUri}/logistics-events/${rcs}` },
        "api:isTriggeredBy": { "@id": `${base}/action-requests/${byId}` },
      });
      for (const d of sent) await assertConforms(d.body);
      // The event's URI is the one the events API serves.
      const event = await oneRecord(sent[1]!.body["api:hasLogisticsEvent"]["@id"], { token: reader.key });
      expect(event.status).toBe(200);
      expect(event.body["cargo:eventCode"]).toEqual({
        "@id": "https://onerecord.iata.org/ns/code-lists/StatusCode#DEP",
      });
      expect(await notificationsTo(otherAwb)).toEqual([]);
    });

    it("the first milestone writes the AWB's Waybill and Shipment: CREATED to their type subscriptions, AVAILABLE to partners, once", async () => {
      const waybills = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", WAYBILL, ["LOGISTICS_OBJECT_CREATED"]);
      const everything = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", `${CARGO}LogisticsObject`, [
        "LOGISTICS_OBJECT_CREATED",
      ]);
      const partnerServer = `http://partner-${randomUUID()}.test/1r`;
      await app.database.prisma.oneRecordPartner.create({
        data: { organization: `https://partner.test/${randomUUID()}`, serverUrl: partnerServer, announceObjects: true },
      });
      const awb = nextAwb();
      await milestone(awb, "RCS");
      expect(
        (await app.database.prisma.logisticsObject.findMany({ where: { awb }, orderBy: { id: "asc" } })).map((o) => [
          o.id,
          o.revision,
        ]),
      ).toEqual([
        [`shipment-${awb}`, 1],
        [`waybill-${awb}`, 1],
      ]);
      await milestone(awb, "MAN");
      const ofAwb = <T extends { body: Body }>(rows: T[]) =>
        rows.filter((d) => String(d.body["api:hasLogisticsObject"]["@id"]).endsWith(awb));
      const toWaybills = ofAwb(await notificationsTo(waybills));
      expect(
        toWaybills.map((d) => [d.eventId, d.body["api:hasEventType"]["@id"], d.body["api:hasLogisticsObject"]]),
      ).toEqual([[null, "api:LOGISTICS_OBJECT_CREATED", { "@id": `${base}/logistics-objects/waybill-${awb}` }]]);
      await assertConforms(toWaybills[0]!.body);
      expect(
        ofAwb(await notificationsTo(everything))
          .map((d) => d.body["api:hasLogisticsObjectType"]["@value"])
          .sort(),
      ).toEqual([SHIPMENT, WAYBILL]);
      const announced = await app.database.prisma.delivery.findMany({
        where: { callback: `${partnerServer}/notifications` },
      });
      const bodies = announced
        .map((d) => JSON.parse(d.payload) as Body)
        .filter((b) => String(b["api:hasLogisticsObject"]["@id"]).endsWith(awb));
      expect(
        bodies.map((b) => [b["api:hasEventType"]["@id"], b["api:hasLogisticsObjectType"]["@value"]]).sort(),
      ).toEqual([
        ["api:LOGISTICS_OBJECT_AVAILABLE", SHIPMENT],
        ["api:LOGISTICS_OBJECT_AVAILABLE", WAYBILL],
      ]);
      expect(announced.every((d) => d.kind === "ONE_RECORD" && d.oneRecordSubscriptionId === null)).toBe(true);
      for (const b of bodies) await assertConforms(b);
      await app.database.prisma.oneRecordPartner.deleteMany({ where: { serverUrl: partnerServer } });
    });

    it("an AWB's objects written before its first milestone notify their creation there, and the milestone not again", async () => {
      const shipments = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", SHIPMENT, ["LOGISTICS_OBJECT_CREATED"]);
      const createdOf = async (awb: string) =>
        (await notificationsTo(shipments)).filter(
          (d) => d.body["api:hasLogisticsObject"]["@id"] === `${base}/logistics-objects/shipment-${awb}`,
        );
      // Known only from a status that is no milestone: written when first read.
      const read = nextAwb();
      await app.database.prisma.carrierStatus.create({
        data: {
          statusKey: `fsu:${randomUUID()}`,
          awb: read,
          ordinal: 1,
          code: "FOH",
          mapped: false,
          format: "FSU",
          sourceText: "FOH",
          receivedAt: new Date(),
        },
      });
      expect((await oneRecord(`${base}/logistics-objects/waybill-${read}`, { token: reader.key })).status).toBe(200);
      expect(await createdOf(read)).toHaveLength(1);
      await milestone(read);
      expect(await createdOf(read)).toHaveLength(1);
      // Posted by the carrier before any milestone: the post creates both.
      const posted = nextAwb();
      const res = await oneRecord(`${base}/logistics-objects`, {
        token: writer.key,
        body: {
          "@context": { cargo: CARGO },
          "@type": "cargo:Waybill",
          "cargo:waybillPrefix": posted.slice(0, 3),
          "cargo:waybillNumber": posted.slice(4),
        },
      });
      expect(res.status).toBe(201);
      expect(await createdOf(posted)).toHaveLength(1);
      await milestone(posted);
      expect(await createdOf(posted)).toHaveLength(1);
      await assertConforms((await createdOf(posted))[0]!.body);
    });

    it("two concurrent first ingestions of one AWB write its objects once and notify their creation once", async () => {
      const shipments = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", SHIPMENT, ["LOGISTICS_OBJECT_CREATED"]);
      const awb = nextAwb();
      await Promise.all([milestone(awb, "RCS"), milestone(awb, "MAN"), milestone(awb, "DEP")]);
      expect(await app.database.prisma.logisticsObject.count({ where: { awb } })).toBe(2);
      const created = (await notificationsTo(shipments)).filter(
        (d) => d.body["api:hasLogisticsObject"]["@id"] === `${base}/logistics-objects/shipment-${awb}`,
      );
      expect(created).toHaveLength(1);
    });

    it("a subscriber is told of AWBs by its scopes: a client without events:read and an agent whose token had none get nothing, an agent whose token had it gets its type subscription's", async () => {
      const awb = nextAwb();
      const noScope = await subscribe(outsider, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${awb}`, [
        "LOGISTICS_EVENT_RECEIVED",
      ]);
      const agent = { clientId: null, organization: `https://1r.forwarder.test/logistics-objects/${randomUUID()}` };
      const agentByType = await subscribe(
        agent,
        "LOGISTICS_OBJECT_TYPE",
        SHIPMENT,
        ["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_CREATED"],
        { agentScopes: ["subscriptions"] },
      );
      const agentById = await subscribe(agent, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${awb}`, [
        "LOGISTICS_EVENT_RECEIVED",
      ]);
      const scoped = { clientId: null, organization: `https://1r.forwarder.test/logistics-objects/${randomUUID()}` };
      const scopedByType = await subscribe(
        scoped,
        "LOGISTICS_OBJECT_TYPE",
        SHIPMENT,
        ["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_CREATED"],
        { agentScopes: ["events:read"] },
      );
      await milestone(awb);
      expect(await notificationsTo(noScope)).toEqual([]);
      expect(await notificationsTo(agentByType)).toEqual([]);
      expect(await notificationsTo(agentById)).toEqual([]);
      const told = (await notificationsTo(scopedByType)).filter((d) =>
        String(d.body["api:hasLogisticsObject"]["@id"]).endsWith(awb),
      );
      expect(told.map((d) => [d.clientId, d.body["api:hasEventType"]["@id"]]).sort()).toEqual([
        [null, "api:LOGISTICS_EVENT_RECEIVED"],
        [null, "api:LOGISTICS_OBJECT_CREATED"],
      ]);
    });

    describe("carrier statuses that are no milestones", () => {
      const fixture = (name: string) => readFileSync(path.join(__dirname, "..", "fixtures", name), "utf8");
      const shipmentUri = (awb: string) => `${base}/logistics-objects/shipment-${awb}`;
      const eventsOf = (awb: string) =>
        subscribe(reader, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${awb}`, ["LOGISTICS_EVENT_RECEIVED"]);
      const statusOf = (awb: string, code: string) =>
        app.database.prisma.carrierStatus.findFirstOrThrow({ where: { awb, code } });
      /** What a subscription was told: [event_id, the event's URI], in the order queued. */
      const toldOf = async (subscriptionId: string) =>
        (await notificationsTo(subscriptionId)).map((d) => [d.eventId, d.body["api:hasLogisticsEvent"]["@id"]]);

      it("an FSU's FOH: LOGISTICS_EVENT_RECEIVED naming its event as the events API serves it, event_id null, once", async () => {
        const awb = nextAwb();
        const subscription = await eventsOf(awb);
        const message = `FSU/14\n${awb}FRAJFK/T10K500\nFOH/15OCT1500/FRA/T10K500\n`;
        await sendFsu(message);
        const foh = await statusOf(awb, "FOH");
        const eventUri = `${shipmentUri(awb)}/logistics-events/${foh.id}`;
        const [sent, ...more] = await notificationsTo(subscription);
        expect(more).toEqual([]);
        expect(sent!.kind).toBe("ONE_RECORD");
        expect(sent!.eventId).toBeNull();
        expect(sent!.body).toEqual({
          "@context": { api: API, cargo: CARGO },
          "@type": "api:Notification",
          "api:hasEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
          "api:hasLogisticsObject": { "@id": shipmentUri(awb) },
          "api:hasLogisticsObjectType": { "@type": ANY_URI, "@value": SHIPMENT },
          "api:hasLogisticsEvent": { "@id": eventUri },
          "api:isTriggeredBy": { "@id": `${base}/action-requests/${subscription}` },
        });
        await assertConforms(sent!.body);
        const event = await oneRecord(eventUri, { token: reader.key });
        expect(event.status).toBe(200);
        expect(event.body["cargo:eventCode"]).toEqual({
          "@id": "https://onerecord.iata.org/ns/code-lists/StatusCode#FOH",
        });
        // The same message again records nothing new: nothing is notified again.
        await sendFsu(message);
        expect(await toldOf(subscription)).toEqual([[null, eventUri]]);
      });

      it("an FSU's DEP and FOH: each event once, the DEP as its milestone; a repeat of the DEP with a new FOH tells of the FOH only", async () => {
        const awb = nextAwb();
        const subscription = await eventsOf(awb);
        const dep = "DEP/LH400/16OCT/FRAJFK/T10K500/A1745\n";
        const message = `FSU/14\n${awb}FRAJFK/T10K500\n${dep}FOH/15OCT1500/FRA/T10K500\n`;
        await sendFsu(message);
        const [depId] = await eventIdsOf(awb);
        const foh = await statusOf(awb, "FOH");
        const told = [
          [depId, `${shipmentUri(awb)}/logistics-events/${depId}`],
          [null, `${shipmentUri(awb)}/logistics-events/${foh.id}`],
        ];
        expect(await toldOf(subscription)).toEqual(told);
        await sendFsu(message);
        expect(await toldOf(subscription)).toEqual(told);
        // The DEP again (no milestone stored) with a FOH not recorded yet: that FOH's event only.
        await sendFsu(`FSU/14\n${awb}FRAJFK/T10K500\n${dep}FOH/16OCT0900/JFK/T10K500\n`);
        const later = await app.database.prisma.carrierStatus.findFirstOrThrow({
          where: { awb, code: "FOH", station: "JFK" },
        });
        expect(await toldOf(subscription)).toEqual([
          ...told,
          [null, `${shipmentUri(awb)}/logistics-events/${later.id}`],
        ]);
        for (const d of await notificationsTo(subscription)) await assertConforms(d.body);
      });

      it("a message of many codes: exactly the events the events API lists, each once; codes StatusCode lacks are no events", async () => {
        const awb = nextAwb();
        const subscription = await eventsOf(awb);
        const byType = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", SHIPMENT, ["LOGISTICS_EVENT_RECEIVED"]);
        const message = fixture("fsu/unknown-codes.txt").replace("020-12345675", awb);
        await sendFsu(message);
        const list = await oneRecord(`${shipmentUri(awb)}/logistics-events`, { token: reader.key });
        expect(list.status).toBe(200);
        const listed = itemsOf(list.body).map((e) => e["@id"] as string);
        const codes = await app.database.prisma.carrierStatus.findMany({ where: { awb } });
        // Some of its statuses are events, some are not (unknown codes, OSI…): the list is a strict part.
        expect(listed.length).toBeGreaterThan(2);
        expect(listed.length).toBeLessThan(codes.length);
        const told = (await notificationsTo(subscription)).map((d) => d.body["api:hasLogisticsEvent"]["@id"] as string);
        expect([...told].sort()).toEqual([...listed].sort());
        const byTypeTold = (await notificationsTo(byType))
          .filter((d) => d.body["api:hasLogisticsObject"]["@id"] === shipmentUri(awb))
          .map((d) => d.body["api:hasLogisticsEvent"]["@id"] as string);
        expect(byTypeTold.sort()).toEqual([...listed].sort());
        await sendFsu(message);
        expect(await notificationsTo(subscription)).toHaveLength(told.length);
      });
    });

    it("a delegate without events:read gets the milestones of the AWB its active grant names, no other", async () => {
      const [granted, other] = [nextAwb(), nextAwb()];
      await milestone(granted);
      await milestone(other);
      await app.database.prisma.logisticsObjectGrant.create({
        data: {
          objectId: `shipment-${granted}`,
          organizationId: outsider.organization,
          grantedBy: "organization-carrier",
          delegationId: randomUUID(),
        },
      });
      const shipments = await subscribe(outsider, "LOGISTICS_OBJECT_TYPE", SHIPMENT, ["LOGISTICS_EVENT_RECEIVED"]);
      await milestone(granted, "DEP");
      await milestone(other, "DEP");
      const sent = await notificationsTo(shipments);
      expect(sent.map((d) => d.body["api:hasLogisticsObject"]["@id"])).toEqual([
        `${base}/logistics-objects/shipment-${granted}`,
      ]);
    });

    it("a legacy webhook and a ONE Record subscription on one AWB each get each milestone once, a retried milestone too", async () => {
      const awb = nextAwb();
      const legacy = await app.database.prisma.subscription.create({
        data: { clientId: reader.clientId, awb, callback: "http://webhooks.test/cb", states: ["*"] },
      });
      const oneRecordSubscription = await subscribe(reader, "LOGISTICS_OBJECT_IDENTIFIER", `shipment-${awb}`, [
        "LOGISTICS_EVENT_RECEIVED",
      ]);
      const eventId = `retried-${randomUUID()}`;
      await milestone(awb, "RCS", eventId);
      await milestone(awb, "RCS", eventId);
      await milestone(awb, "DEP");
      const events = await eventIdsOf(awb);
      expect(events).toHaveLength(2);
      const webhooks = await app.database.prisma.delivery.findMany({ where: { subscriptionId: legacy.id } });
      expect(webhooks.map((d) => [d.kind, d.eventId]).sort()).toEqual(events.map((e) => ["WEBHOOK", e]).sort());
      const notifications = await notificationsTo(oneRecordSubscription);
      expect(notifications.map((d) => d.eventId).sort()).toEqual([...events].sort());
    });

    it("sendLogisticsObjectBody: the Shipment's state with absolute ids and its revision", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const withBody = await subscribe(
        reader,
        "LOGISTICS_OBJECT_IDENTIFIER",
        `shipment-${awb}`,
        ["LOGISTICS_EVENT_RECEIVED"],
        { sendBody: true },
      );
      await milestone(awb, "DEP");
      const [sent] = await notificationsTo(withBody);
      expect(sent!.body["api:hasLogisticsObject"]).toMatchObject({
        "@id": `${base}/logistics-objects/shipment-${awb}`,
        "@type": [SHIPMENT],
        [`${CARGO}waybill`]: [{ "@id": `${base}/logistics-objects/waybill-${awb}` }],
        [`${API}hasRevision`]: [{ "@value": "1" }],
      });
      await assertConforms(sent!.body);
    });

    describe("objects and events", () => {
      const piece = (extra: Body = {}) => ({
        "@context": { cargo: CARGO },
        "@type": "cargo:Piece",
        "cargo:goodsDescription": "books",
        ...extra,
      });
      const create = async (key: string, body: Body) => {
        const res = await oneRecord(`${base}/logistics-objects`, { token: key, body });
        expect(res.status).toBe(201);
        return res.headers.get("location")!;
      };
      const change = (uri: string, revision: number, notify = false) => ({
        "@context": { cargo: CARGO, api: API },
        "@type": "api:Change",
        "api:hasLogisticsObject": { "@id": uri },
        "api:hasRevision": revision,
        ...(notify ? { "api:notifyRequestStatusChange": true } : {}),
        "api:hasOperation": [
          {
            "@type": "api:Operation",
            "api:op": { "@id": "api:DELETE" },
            "api:s": uri,
            "api:p": `${CARGO}goodsDescription`,
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": "http://www.w3.org/2001/XMLSchema#string",
              "api:hasValue": "books",
            },
          },
          {
            "@type": "api:Operation",
            "api:op": { "@id": "api:ADD" },
            "api:s": uri,
            "api:p": `${CARGO}goodsDescription`,
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": "http://www.w3.org/2001/XMLSchema#string",
              "api:hasValue": "more books",
            },
          },
        ],
      });

      it("POST /logistics-objects: CREATED to type subscriptions whose subscriber may read it, none to others", async () => {
        const own = await subscribe(writer, "LOGISTICS_OBJECT_TYPE", PIECE, ["LOGISTICS_OBJECT_CREATED"]);
        const stranger = await subscribe(reader, "LOGISTICS_OBJECT_TYPE", PIECE, ["LOGISTICS_OBJECT_CREATED"]);
        const uri = await create(writer.key, piece());
        const [sent, ...more] = await notificationsTo(own);
        expect(more).toEqual([]);
        expect([sent!.kind, sent!.eventId, sent!.clientId]).toEqual(["ONE_RECORD", null, writer.clientId]);
        expect(sent!.body["api:hasEventType"]).toEqual({ "@id": "api:LOGISTICS_OBJECT_CREATED" });
        expect(sent!.body["api:hasLogisticsObject"]).toEqual({ "@id": uri });
        expect(sent!.body["api:hasLogisticsObjectType"]["@value"]).toBe(PIECE);
        await assertConforms(sent!.body);
        expect(await notificationsTo(stranger)).toEqual([]);
      });

      it("an accepted change: UPDATED naming the changed properties, and the requester's CHANGE_REQUEST_ACCEPTED", async () => {
        const uri = await create(writer.key, piece());
        const id = uri.slice(uri.lastIndexOf("/") + 1);
        const updates = await subscribe(writer, "LOGISTICS_OBJECT_IDENTIFIER", id, ["LOGISTICS_OBJECT_UPDATED"]);
        const server = `http://writer-${randomUUID()}.test/1r`;
        await app.database.prisma.oneRecordPartner.create({
          data: { organization: writer.organization, serverUrl: server, clientId: writer.clientId },
        });
        try {
          const res = await oneRecord(uri, { method: "PATCH", token: writer.key, body: change(uri, 1, true) });
          expect(res.status).toBe(201);
          const request = res.headers.get("location")!;
          const [updated, ...more] = await notificationsTo(updates);
          expect(more).toEqual([]);
          expect(updated!.body).toMatchObject({
            "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
            "api:hasLogisticsObject": { "@id": uri },
            "api:hasChangedProperty": [{ "@type": ANY_URI, "@value": `${CARGO}goodsDescription` }],
            "api:isTriggeredBy": { "@id": `${base}/action-requests/${updates}` },
          });
          await assertConforms(updated!.body);
          const statuses = await app.database.prisma.delivery.findMany({
            where: { callback: `${server}/notifications` },
          });
          expect(statuses.map((d) => [d.kind, d.clientId, d.oneRecordSubscriptionId])).toEqual([
            ["ONE_RECORD", writer.clientId, null],
          ]);
          const status = JSON.parse(statuses[0]!.payload) as Body;
          expect(status).toMatchObject({
            "api:hasEventType": { "@id": "api:CHANGE_REQUEST_ACCEPTED" },
            "api:hasLogisticsObject": { "@id": uri },
            "api:isTriggeredBy": { "@id": request },
          });
          await assertConforms(status);
          // A change that does not ask for status notifications gets none.
          await oneRecord(uri, { method: "PATCH", token: writer.key, body: change(uri, 2) });
          expect(await app.database.prisma.delivery.count({ where: { callback: `${server}/notifications` } })).toBe(1);
        } finally {
          await app.database.prisma.oneRecordPartner.delete({ where: { organization: writer.organization } });
        }
      });

      it("a change that fails, and a change request rejected by the holder, tell the requester who asked", async () => {
        const uri = await create(writer.key, piece());
        const id = uri.slice(uri.lastIndexOf("/") + 1);
        await app.database.prisma.logisticsObjectGrant.create({
          data: { objectId: id, organizationId: reader.organization, grantedBy: writer.organization },
        });
        const server = `http://reader-${randomUUID()}.test/1r`;
        await app.database.prisma.oneRecordPartner.create({
          data: { organization: reader.organization, serverUrl: server, clientId: reader.clientId },
        });
        try {
          const pending = await oneRecord(uri, { method: "PATCH", token: reader.key, body: change(uri, 1, true) });
          expect(pending.status).toBe(201);
          const request = pending.headers.get("location")!;
          const rejected = await oneRecord(`${request}?status=REQUEST_REJECTED`, {
            method: "PATCH",
            token: writer.key,
          });
          expect(rejected.status).toBe(204);
          const outdated = await oneRecord(uri, { method: "PATCH", token: reader.key, body: change(uri, 7, true) });
          expect(outdated.status).toBe(201);
          const sent = await app.database.prisma.delivery.findMany({
            where: { callback: `${server}/notifications` },
            orderBy: { createdAt: "asc" },
          });
          const bodies = sent.map((d) => JSON.parse(d.payload) as Body);
          expect(bodies.map((b) => [b["api:hasEventType"]["@id"], b["api:isTriggeredBy"]["@id"]])).toEqual([
            ["api:CHANGE_REQUEST_REJECTED", request],
            ["api:CHANGE_REQUEST_FAILED", outdated.headers.get("location")],
          ]);
          for (const b of bodies) await assertConforms(b);
        } finally {
          await app.database.prisma.oneRecordPartner.delete({ where: { organization: reader.organization } });
        }
      });

      it("the carrier's Waybill completing a skeleton: UPDATED with the properties it described", async () => {
        const awb = nextAwb();
        await milestone(awb);
        const updates = await subscribe(reader, "LOGISTICS_OBJECT_IDENTIFIER", `waybill-${awb}`, [
          "LOGISTICS_OBJECT_UPDATED",
        ]);
        await create(writer.key, {
          "@context": { cargo: CARGO },
          "@type": "cargo:Waybill",
          "cargo:waybillPrefix": awb.slice(0, 3),
          "cargo:waybillNumber": awb.slice(4),
          "cargo:shippingInfo": "KEEP DRY",
        });
        const [updated, ...more] = await notificationsTo(updates);
        expect(more).toEqual([]);
        expect(updated!.body["api:hasChangedProperty"].map((p: Body) => p["@value"])).toEqual([
          `${CARGO}shippingInfo`,
          `${CARGO}skeletonIndicator`,
        ]);
        await assertConforms(updated!.body);
      });

      it("a posted event that is no milestone: LOGISTICS_EVENT_RECEIVED naming it, once for a retried POST", async () => {
        const uri = await create(writer.key, piece());
        const id = uri.slice(uri.lastIndexOf("/") + 1);
        const events = await subscribe(writer, "LOGISTICS_OBJECT_IDENTIFIER", id, ["LOGISTICS_EVENT_RECEIVED"]);
        const event = {
          "@context": { cargo: CARGO },
          "@type": "cargo:LogisticsEvent",
          "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-11-20T08:00:00Z" },
          "cargo:eventName": "weighed",
        };
        const first = await oneRecord(`${uri}/logistics-events`, { token: writer.key, body: event });
        expect(first.status).toBe(201);
        const again = await oneRecord(`${uri}/logistics-events`, { token: writer.key, body: event });
        expect(again.headers.get("location")).toBe(first.headers.get("location"));
        const sent = await notificationsTo(events);
        expect(sent.map((d) => [d.eventId, d.body["api:hasLogisticsEvent"]])).toEqual([
          [null, { "@id": first.headers.get("location") }],
        ]);
        await assertConforms(sent[0]!.body);
      });
    });
  });
});
