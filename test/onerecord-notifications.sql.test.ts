import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { insertAwbObjects } from "../src/onerecord/sql/awb-objects-insert.sql";
import { partnersAnnouncedTo } from "../src/onerecord/sql/partners-announced-to.sql";
import { subscriptionsMatchingAwb } from "../src/onerecord/sql/subscriptions-matching-awb.sql";
import { subscriptionsMatchingObject } from "../src/onerecord/sql/subscriptions-matching-object.sql";
import { subscriptionsReadingAwbs } from "../src/onerecord/sql/subscriptions-reading-awbs.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { fixtures, openTestDatabase } from "./support/test-database";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const SHIPMENT = `${CARGO}Shipment`;
const WAYBILL = `${CARGO}Waybill`;
const IDENTIFIER = "LOGISTICS_OBJECT_IDENTIFIER";
const TYPE = "LOGISTICS_OBJECT_TYPE";

/** The statements that find whom a ONE Record notification goes to, and the AWB objects' batch insert, on both databases. */
describe.each(BACKENDS)("ONE Record notification statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let fx: ReturnType<typeof fixtures>;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
    });
    afterAll(() => disposers.disposeAll());

    const keyOf = async (clientId: string, scopes: string[], revokedAt: Date | null = null) =>
      db.prisma.apiKey.create({
        data: { clientId, lookupPrefix: randomUUID(), keyHash: "hash", scopes, revokedAt },
      });

    const subscription = async (fields: {
      topicType: string;
      topic: string;
      subscriber?: string;
      clientId?: string | null;
      /** An OIDC agent's token scopes when it subscribed. */
      agentScopes?: string[];
      eventTypes?: string[];
      status?: string;
      expiresAt?: Date | null;
      disabledAt?: Date | null;
    }): Promise<string> =>
      (
        await db.prisma.oneRecordSubscription.create({
          data: {
            status: fields.status ?? "REQUEST_ACCEPTED",
            initiatedBy: "SUBSCRIBER",
            requestedBy: fields.subscriber ?? "organization-x",
            subscription: {},
            subscriber: fields.subscriber ?? "organization-x",
            topicType: fields.topicType,
            topic: fields.topic,
            eventTypes: fields.eventTypes ?? ["LOGISTICS_EVENT_RECEIVED"],
            expiresAt: fields.expiresAt ?? null,
            disabledAt: fields.disabledAt ?? null,
            endpoint: "http://subscriber.test/notifications",
            origin: "http://subscriber.test:80",
            clientId: fields.clientId ?? null,
            ...(fields.agentScopes ? { agentScopes: fields.agentScopes } : {}),
          },
        })
      ).id;

    const matchAwb = async (objectIds: string[], classes: string[], eventTypes = ["LOGISTICS_EVENT_RECEIVED"]) =>
      (await subscriptionsMatchingAwb.rows(db.prisma, { objectIds, classes, eventTypes })).map((r) => r.id);

    it("subscriptions-matching-awb: an API client's identifier and type subscriptions while a key of it reads AWBs", async () => {
      const reader = await fx.client();
      await keyOf(reader, ["events:read"]);
      const awb = fx.awb();
      const other = fx.awb();
      const byId = await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, clientId: reader });
      const byType = await subscription({ topicType: TYPE, topic: SHIPMENT, clientId: reader });
      const waybills = await subscription({ topicType: TYPE, topic: WAYBILL, clientId: reader });
      expect((await matchAwb([`shipment-${awb}`], [SHIPMENT])).sort()).toEqual([byId, byType].sort());
      expect(await matchAwb([`shipment-${other}`], [])).toEqual([]);
      expect(await matchAwb([`shipment-${other}`], [WAYBILL])).toEqual([waybills]);
      // Its event types: a subscription without LOGISTICS_OBJECT_CREATED is not told of a creation.
      expect(await matchAwb([`shipment-${awb}`], [SHIPMENT], ["LOGISTICS_OBJECT_CREATED"])).toEqual([]);
      const row = (
        await subscriptionsMatchingAwb.rows(db.prisma, {
          objectIds: [`shipment-${awb}`],
          classes: [],
          eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
        })
      )[0];
      expect(row).toEqual({
        id: byId,
        topic_type: IDENTIFIER,
        topic: `shipment-${awb}`,
        event_types: ["LOGISTICS_EVENT_RECEIVED"],
        send_body: false,
        endpoint: "http://subscriber.test/notifications",
        client_id: reader,
        by_scope: true,
        granted: [],
      });
    });

    it("subscriptions-matching-awb: a subscriber without the scope, by its active grants on the objects asked about", async () => {
      const delegate = await fx.client();
      await keyOf(delegate, ["subscriptions"]);
      const [granted, expired, other] = [fx.awb(), fx.awb(), fx.awb()];
      for (const awb of [granted, expired, other])
        await db.prisma.logisticsObject.create({
          data: {
            id: `shipment-${awb}`,
            type: SHIPMENT,
            types: [SHIPMENT],
            body: {},
            revision: 1,
            awb,
            createdBy: "c",
          },
        });
      const grant = (awb: string, expiresAt: Date | null) =>
        db.prisma.logisticsObjectGrant.create({
          data: {
            objectId: `shipment-${awb}`,
            organizationId: `organization-${delegate}`,
            grantedBy: "c",
            delegationId: randomUUID(),
            expiresAt,
          },
        });
      await grant(granted, new Date(Date.now() + 60_000));
      await grant(expired, new Date(Date.now() - 60_000));
      const byType = await subscription({
        topicType: TYPE,
        topic: SHIPMENT,
        clientId: delegate,
        subscriber: `organization-${delegate}`,
      });
      const ids = [granted, expired, other].map((awb) => `shipment-${awb}`);
      const rows = await subscriptionsMatchingAwb.rows(db.prisma, {
        objectIds: ids,
        classes: [SHIPMENT],
        eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      });
      expect(rows.filter((r) => r.id === byType).map((r) => [r.by_scope, r.granted])).toEqual([
        [false, [`shipment-${granted}`]],
      ]);
      const none = await subscriptionsMatchingAwb.rows(db.prisma, {
        objectIds: ids.slice(1),
        classes: [SHIPMENT],
        eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      });
      expect(none.filter((r) => r.id === byType)).toEqual([]);
    });

    it("subscriptions-matching-awb: none for a client without a key that reads AWBs, nor once its key is revoked", async () => {
      const awb = fx.awb();
      const scoped = await fx.client();
      await keyOf(scoped, ["subscriptions"]);
      const revoked = await fx.client();
      await keyOf(revoked, ["events:read"], new Date());
      const writer = await fx.client();
      await keyOf(writer, ["objects:write"]);
      await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, clientId: scoped });
      await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, clientId: revoked });
      const written = await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, clientId: writer });
      expect(await matchAwb([`shipment-${awb}`], [])).toEqual([written]);
    });

    it("subscriptions-matching-awb: an OIDC agent by the scopes its token had when it subscribed, identifier and type alike", async () => {
      const awb = fx.awb();
      const agent = () => `https://1r.forwarder.test/logistics-objects/${randomUUID()}`;
      const [reader, writer, other] = [agent(), agent(), agent()];
      const expected = [
        await subscription({
          topicType: IDENTIFIER,
          topic: `shipment-${awb}`,
          subscriber: reader,
          agentScopes: ["events:read"],
        }),
        await subscription({
          topicType: TYPE,
          topic: `${CARGO}LogisticsObject`,
          subscriber: reader,
          agentScopes: ["events:read"],
        }),
        await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: writer, agentScopes: ["objects:write"] }),
      ];
      // Scopes that do not read AWBs, and none recorded: nothing by scope, whatever the topic.
      const unread = [
        await subscription({
          topicType: IDENTIFIER,
          topic: `shipment-${awb}`,
          subscriber: other,
          agentScopes: ["subscriptions"],
        }),
        await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: other, agentScopes: [] }),
        await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, subscriber: other }),
      ];
      const rows = (
        await subscriptionsMatchingAwb.rows(db.prisma, {
          objectIds: [`shipment-${awb}`],
          classes: [SHIPMENT, `${CARGO}LogisticsObject`],
          eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
        })
      ).filter((r) => [...expected, ...unread].includes(r.id));
      expect(rows.map((r) => r.id).sort()).toEqual([...expected].sort());
      expect(rows.every((r) => r.by_scope && r.client_id === null)).toBe(true);
    });

    it("subscriptions-matching-awb: an OIDC agent without the scope (an access delegation's delegate) only while its grant is active", async () => {
      const [awb, other] = [fx.awb(), fx.awb()];
      await db.prisma.logisticsObject.create({
        data: { id: `shipment-${awb}`, type: SHIPMENT, types: [SHIPMENT], body: {}, revision: 1, awb, createdBy: "c" },
      });
      const delegate = `https://1r.forwarder.test/logistics-objects/${randomUUID()}`;
      const byId = await subscription({
        topicType: IDENTIFIER,
        topic: `shipment-${awb}`,
        subscriber: delegate,
        agentScopes: ["subscriptions"],
      });
      const byType = await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: delegate, agentScopes: [] });
      await db.prisma.logisticsObjectGrant.create({
        data: {
          objectId: `shipment-${awb}`,
          organizationId: delegate,
          grantedBy: "c",
          delegationId: randomUUID(),
          expiresAt: new Date(Date.now() + 60_000),
        },
      });
      const theGrant = { objectId_organizationId: { objectId: `shipment-${awb}`, organizationId: delegate } };
      const match = async () =>
        (
          await subscriptionsMatchingAwb.rows(db.prisma, {
            objectIds: [`shipment-${awb}`, `shipment-${other}`],
            classes: [SHIPMENT],
            eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
          })
        )
          .filter((r) => [byId, byType].includes(r.id))
          .map((r) => [r.id, r.by_scope, r.granted]);
      const granted = [false, [`shipment-${awb}`]];
      expect((await match()).sort()).toEqual(
        [
          [byId, ...granted],
          [byType, ...granted],
        ].sort(),
      );
      // Expired: nothing.
      await db.prisma.logisticsObjectGrant.update({
        where: theGrant,
        data: { expiresAt: new Date(Date.now() - 1_000) },
      });
      expect(await match()).toEqual([]);
      // Active again, then removed (its delegation revoked): nothing.
      await db.prisma.logisticsObjectGrant.update({ where: theGrant, data: { expiresAt: null } });
      expect(await match()).toHaveLength(2);
      await db.prisma.logisticsObjectGrant.delete({ where: theGrant });
      expect(await match()).toEqual([]);
    });

    it("subscriptions-matching-awb: none that is not accepted, expired or disabled", async () => {
      const reader = await fx.client();
      await keyOf(reader, ["events:read"]);
      const awb = fx.awb();
      const topic = `shipment-${awb}`;
      const past = new Date(Date.now() - 60_000);
      for (const status of ["REQUEST_PENDING", "REQUEST_REJECTED", "REQUEST_REVOKED", "REQUEST_FAILED"])
        await subscription({ topicType: IDENTIFIER, topic, clientId: reader, status });
      await subscription({ topicType: IDENTIFIER, topic, clientId: reader, expiresAt: past });
      await subscription({ topicType: IDENTIFIER, topic, clientId: reader, disabledAt: past });
      const active = await subscription({
        topicType: IDENTIFIER,
        topic,
        clientId: reader,
        expiresAt: new Date(Date.now() + 60_000),
      });
      expect(await matchAwb([topic], [])).toEqual([active]);
    });

    it("subscriptions-reading-awbs: what each subscription's subscriber may read of the objects asked about", async () => {
      const reader = await fx.client();
      await keyOf(reader, ["events:read"]);
      const delegate = await fx.client();
      await keyOf(delegate, ["subscriptions"]);
      const awb = fx.awb();
      await db.prisma.logisticsObject.create({
        data: { id: `shipment-${awb}`, type: SHIPMENT, types: [SHIPMENT], body: {}, revision: 1, awb, createdBy: "c" },
      });
      await db.prisma.logisticsObjectGrant.create({
        data: { objectId: `shipment-${awb}`, organizationId: `organization-${delegate}`, grantedBy: "c" },
      });
      const agent = "https://1r.forwarder.test/logistics-objects/org";
      const scopedAgent = "https://1r.forwarder.test/logistics-objects/scoped";
      const ids = [
        await subscription({ topicType: TYPE, topic: SHIPMENT, clientId: reader }),
        await subscription({
          topicType: TYPE,
          topic: SHIPMENT,
          clientId: delegate,
          subscriber: `organization-${delegate}`,
        }),
        await subscription({ topicType: IDENTIFIER, topic: `shipment-${awb}`, subscriber: agent }),
        await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: agent }),
        await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: scopedAgent, agentScopes: ["events:read"] }),
      ];
      const rows = await subscriptionsReadingAwbs.rows(db.prisma, {
        ids,
        objectIds: [`shipment-${awb}`, `shipment-${fx.awb()}`],
      });
      expect(Object.fromEntries(rows.map((r) => [r.id, [r.by_scope, r.granted]]))).toEqual({
        [ids[0]!]: [true, []],
        [ids[1]!]: [false, [`shipment-${awb}`]],
        [ids[2]!]: [false, []],
        [ids[3]!]: [false, []],
        [ids[4]!]: [true, []],
      });
    });

    it("subscriptions-matching-object: the creator and the holders of grants that have not expired", async () => {
      const objectId = randomUUID();
      const classes = [`${CARGO}Piece`, `${CARGO}LogisticsObject`];
      const creator = "organization-creator";
      await db.prisma.logisticsObject.create({
        data: {
          id: objectId,
          type: `${CARGO}Piece`,
          types: [`${CARGO}Piece`],
          body: {},
          revision: 1,
          createdBy: creator,
        },
      });
      const grant = (organizationId: string, expiresAt: Date | null) =>
        db.prisma.logisticsObjectGrant.create({
          data: { objectId, organizationId, grantedBy: creator, expiresAt },
        });
      await grant("organization-granted", null);
      await grant("organization-later", new Date(Date.now() + 60_000));
      await grant("organization-expired", new Date(Date.now() - 60_000));
      const expected = [
        await subscription({ topicType: IDENTIFIER, topic: objectId, subscriber: creator }),
        await subscription({ topicType: TYPE, topic: `${CARGO}Piece`, subscriber: "organization-granted" }),
        await subscription({ topicType: TYPE, topic: `${CARGO}LogisticsObject`, subscriber: "organization-later" }),
      ];
      await subscription({ topicType: IDENTIFIER, topic: objectId, subscriber: "organization-expired" });
      await subscription({ topicType: IDENTIFIER, topic: objectId, subscriber: "organization-stranger" });
      await subscription({ topicType: TYPE, topic: SHIPMENT, subscriber: creator });
      await subscription({
        topicType: IDENTIFIER,
        topic: objectId,
        subscriber: creator,
        eventTypes: ["LOGISTICS_OBJECT_CREATED"],
      });
      const rows = await subscriptionsMatchingObject.rows(db.prisma, {
        objectId,
        classes,
        eventType: "LOGISTICS_EVENT_RECEIVED",
        createdBy: creator,
      });
      expect(rows.map((r) => r.id).sort()).toEqual(expected.sort());
    });

    it("partners-announced-to: the partners that asked for announcements", async () => {
      await db.prisma.oneRecordPartner.createMany({
        data: [
          { organization: "organization-announce", serverUrl: "http://a.test/1r", announceObjects: true },
          { organization: "organization-quiet", serverUrl: "http://q.test/1r", announceObjects: false },
        ],
      });
      expect(await partnersAnnouncedTo.rows(db.prisma, {})).toEqual([
        { server_url: "http://a.test/1r", client_id: null },
      ]);
    });

    it("awb-objects-insert writes what is missing with revision 1, answers only what it wrote", async () => {
      const [first, second] = [fx.awb(), fx.awb()];
      const objects = [first, second].flatMap((awb) => [
        { id: `waybill-${awb}`, type: WAYBILL, body: { "@id": `waybill-${awb}` }, awb },
        { id: `shipment-${awb}`, type: SHIPMENT, body: { "@id": `shipment-${awb}` }, awb },
      ]);
      // A Waybill posted before the first milestone is kept.
      await db.prisma.logisticsObject.create({
        data: {
          id: `waybill-${second}`,
          type: WAYBILL,
          types: [WAYBILL],
          body: { posted: true },
          revision: 2,
          awb: second,
          createdBy: "c",
        },
      });
      const params = {
        ids: objects.map((o) => o.id),
        types: objects.map((o) => o.type),
        bodies: objects.map((o) => JSON.stringify(o.body)),
        awbs: objects.map((o) => o.awb),
        createdBy: "organization-carrier",
      };
      expect(await insertAwbObjects.rows(db.prisma, params)).toEqual([
        { id: `shipment-${first}`, type: SHIPMENT, awb: first },
        { id: `shipment-${second}`, type: SHIPMENT, awb: second },
        { id: `waybill-${first}`, type: WAYBILL, awb: first },
      ]);
      expect(await insertAwbObjects.rows(db.prisma, params)).toEqual([]);
      const rows = await db.prisma.logisticsObject.findMany({
        where: { awb: { in: [first, second] } },
        orderBy: { id: "asc" },
      });
      expect(rows.map((r) => [r.id, r.revision, r.createdBy, r.types])).toEqual([
        [`shipment-${first}`, 1, "organization-carrier", [SHIPMENT]],
        [`shipment-${second}`, 1, "organization-carrier", [SHIPMENT]],
        [`waybill-${first}`, 1, "organization-carrier", [WAYBILL]],
        [`waybill-${second}`, 2, "c", [WAYBILL]],
      ]);
      expect(
        await db.prisma.logisticsObjectRevision.count({
          where: { objectId: { in: [`shipment-${first}`, `shipment-${second}`, `waybill-${first}`] }, revision: 1 },
        }),
      ).toBe(3);
    });
  });
});
