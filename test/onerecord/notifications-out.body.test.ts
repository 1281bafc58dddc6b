import { randomUUID } from "node:crypto";
import { notificationBody } from "../../src/onerecord/notifications-out/notification-body";
import { oneRecordDelivery } from "../../src/onerecord/notifications-out/queue";
import { assertConforms, conformanceReport } from "../support/onerecord-conformance";

const BASE = "https://1r.carrier.example/onerecord";
const SHIPMENT = `${BASE}/logistics-objects/shipment-020-12345675`;
const REQUEST = `${BASE}/action-requests/${randomUUID()}`;
const CARGO = "https://onerecord.iata.org/ns/cargo#";

/** The api:Notification bodies (design decision 6), checked against the SHACL shapes. */
describe("api:Notification bodies", () => {
  it("LOGISTICS_EVENT_RECEIVED names the object, its type, the event and the subscription request", async () => {
    const event = `${SHIPMENT}/logistics-events/${randomUUID()}`;
    const text = notificationBody({
      eventType: "LOGISTICS_EVENT_RECEIVED",
      logisticsObject: SHIPMENT,
      logisticsObjectType: `${CARGO}Shipment`,
      logisticsEvent: event,
      triggeredBy: REQUEST,
    });
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(body).toEqual({
      "@context": { api: "https://onerecord.iata.org/ns/api#", cargo: CARGO },
      "@type": "api:Notification",
      "api:hasEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
      "api:hasLogisticsObject": { "@id": SHIPMENT },
      "api:hasLogisticsObjectType": {
        "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
        "@value": `${CARGO}Shipment`,
      },
      "api:hasLogisticsEvent": { "@id": event },
      "api:isTriggeredBy": { "@id": REQUEST },
    });
    await assertConforms(body);
  });

  it("LOGISTICS_OBJECT_UPDATED lists each changed property once, sorted, as anyURI literals", async () => {
    const body = JSON.parse(
      notificationBody({
        eventType: "LOGISTICS_OBJECT_UPDATED",
        logisticsObject: SHIPMENT,
        logisticsObjectType: `${CARGO}Shipment`,
        changedProperties: [`${CARGO}goodsDescription`, `${CARGO}totalGrossWeight`, `${CARGO}goodsDescription`],
        triggeredBy: REQUEST,
      }),
    ) as Record<string, unknown>;
    expect(body["api:hasChangedProperty"]).toEqual([
      { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": `${CARGO}goodsDescription` },
      { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": `${CARGO}totalGrossWeight` },
    ]);
    await assertConforms(body);
  });

  it("embeds the object's state (expanded, absolute ids) for sendLogisticsObjectBody, and conforms", async () => {
    const state = {
      "@id": SHIPMENT,
      "@type": [`${CARGO}Shipment`],
      [`${CARGO}goodsDescription`]: [{ "@value": "books" }],
      [`${CARGO}waybill`]: [{ "@id": `${BASE}/logistics-objects/waybill-020-12345675` }],
    };
    const body = JSON.parse(
      notificationBody({
        eventType: "LOGISTICS_OBJECT_CREATED",
        logisticsObject: state,
        logisticsObjectType: `${CARGO}Shipment`,
        triggeredBy: REQUEST,
      }),
    ) as Record<string, unknown>;
    expect(body["api:hasLogisticsObject"]).toEqual(state);
    await assertConforms(body);
  });

  it("an action request's status change and an announcement conform", async () => {
    for (const eventType of ["SUBSCRIPTION_REQUEST_ACCEPTED", "CHANGE_REQUEST_REJECTED"] as const)
      await assertConforms(JSON.parse(notificationBody({ eventType, triggeredBy: REQUEST })) as object);
    await assertConforms(
      JSON.parse(
        notificationBody({
          eventType: "LOGISTICS_OBJECT_AVAILABLE",
          logisticsObject: SHIPMENT,
          logisticsObjectType: `${CARGO}Shipment`,
        }),
      ) as object,
    );
  });

  it("the shapes catch a body the builder must never write (a changed property as an IRI node)", async () => {
    const wrong = {
      ...(JSON.parse(notificationBody({ eventType: "LOGISTICS_OBJECT_UPDATED", logisticsObject: SHIPMENT })) as object),
      "api:hasChangedProperty": { "@id": `${CARGO}goodsDescription` },
    };
    expect((await conformanceReport(wrong)).conforms).toBe(false);
  });
});

describe("oneRecordDelivery", () => {
  it("is an outbox row of kind ONE_RECORD for the endpoint's origin, its payload the body", () => {
    const subscriptionId = randomUUID();
    const milestoneId = randomUUID();
    const content = { eventType: "LOGISTICS_EVENT_RECEIVED", logisticsObject: SHIPMENT } as const;
    const row = oneRecordDelivery({
      to: { endpoint: "https://1r.forwarder.example/api/notifications", clientId: null, subscriptionId },
      content,
      milestoneId,
    });
    expect(row).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      kind: "ONE_RECORD",
      leased: false,
      eventId: milestoneId,
      subscriptionId: null,
      oneRecordSubscriptionId: subscriptionId,
      clientId: null,
      callback: "https://1r.forwarder.example/api/notifications",
      origin: "https://1r.forwarder.example:443",
      payload: notificationBody(content),
    });
  });
});
