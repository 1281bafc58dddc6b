import type { Prisma } from "../../db/database";
import type { NewDelivery } from "../../delivery/delivery.store";
import type { RecordedStatus } from "../../milestones/carrier-status.store";
import type { SubscriptionOfAwbsRow } from "../../milestones/milestone.store";
import { isStatusCodeLabel } from "../events/status-codes";
import { CARRIER_ORGANIZATION_ID, clientIdOfOrganizationId } from "../identity/organizations";
import { isLocalId, mapIds, type NodeObject } from "../jsonld-tree";
import { HAS_LATEST_REVISION, HAS_REVISION } from "../objects/object-model";
import { SHIPMENT, shipmentSkeleton, WAYBILL, waybillSkeleton } from "../objects/reference-objects";
import { type OneRecordUris, shipmentIdOf, waybillIdOf } from "../uris";
import { API, XSD } from "../jsonld-context";
import { classesOf } from "./classes";
import type { NotificationContent, NotificationEventType, RequestStatusName } from "./notification-body";
import {
  type MatchedSubscription,
  type NotifiedObject,
  notificationsOutStore as store,
  type Partner,
} from "./notifications-out.store";
import { oneRecordDelivery, type OneRecordNotification, queueOneRecordNotifications } from "./queue";

/** The transaction a producer queues in: the one that writes what it notifies of. */
export type NotifyTx = Pick<Prisma, "$queryRawUnsafe">;

/** A milestone stored by an ingestion: its status_event id is its event's id under the AWB's Shipment. */
export interface StoredMilestoneRef {
  readonly id: string;
  readonly awb: string;
}

/**
 * The carrier statuses recorded now that are events of their AWB's Shipment, as the events API serves
 * them (logistics-event-rows.ts): no milestone (a mapped one is its milestone's event), and a code
 * StatusCode has (SSR, ULD and unknown codes are no events).
 */
function statusEventsOf(statuses: readonly RecordedStatus[]): RecordedStatus[] {
  return statuses.filter((status) => !status.mapped && isStatusCodeLabel(status.code));
}

const EVENT_RECEIVED = "LOGISTICS_EVENT_RECEIVED";
const CREATED = "LOGISTICS_OBJECT_CREATED";
const UPDATED = "LOGISTICS_OBJECT_UPDATED";
const RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/**
 * What queues ONE Record notifications (docs/ONE-RECORD.md "What is notified"), each in the
 * transaction of the write it tells of. `uris`: this server's URIs; their base may be known only once
 * the server listens, and is asked only when there is something to notify.
 */
export function createNotificationProducers({
  uris,
  endpointOf,
}: {
  uris: OneRecordUris;
  /**
   * Where an Organization's notifications go (its registered partner server, or its agent URI's
   * server: `{server}/notifications`); undefined when neither is known.
   */
  endpointOf: (tx: NotifyTx, organizationId: string) => Promise<string | undefined>;
}) {
  const absolute = (body: NodeObject) => mapIds(body, (id) => (isLocalId(id) ? uris.objectUri(id) : undefined));

  /** The object as a notification names it: its URI, or its state when the subscription asks for the body. */
  function objectOf(object: NotifiedObject, sendBody: boolean): string | NodeObject {
    if (!sendBody) return uris.objectUri(object.id);
    const revision = [{ "@value": String(object.revision), "@type": `${XSD}positiveInteger` }];
    return absolute({ ...object.body, [HAS_REVISION]: revision, [HAS_LATEST_REVISION]: revision });
  }

  const toSubscription = (s: MatchedSubscription) => ({
    endpoint: s.endpoint,
    clientId: s.client_id,
    subscriptionId: s.id,
  });

  function subscriptionNotification(
    s: MatchedSubscription,
    eventType: NotificationEventType,
    object: NotifiedObject,
    more: Partial<NotificationContent> = {},
  ): OneRecordNotification {
    return {
      to: toSubscription(s),
      content: {
        eventType,
        logisticsObject: objectOf(object, s.send_body),
        logisticsObjectType: object.type,
        triggeredBy: uris.actionRequestUri(s.id),
        ...more,
      },
    };
  }

  /** Whether a subscription's topic is the object (or one of its classes), and its subscriber may read the object. */
  const isAbout = (s: MatchedSubscription, object: { id: string; types: readonly string[] }) =>
    (s.topic_type === "LOGISTICS_OBJECT_IDENTIFIER"
      ? s.topic === object.id
      : classesOf(object.types).includes(s.topic)) &&
    (s.readsAll || s.granted.includes(object.id));

  /** The subscriptions that take `eventType` of the object and may read it now. */
  function matching(tx: NotifyTx, object: NotifiedObject, eventType: string): Promise<MatchedSubscription[]> {
    return object.awb !== null
      ? store.subscriptionsMatchingAwb(tx, {
          objectIds: [object.id],
          classes: classesOf(object.types),
          eventTypes: [eventType],
        })
      : store.subscriptionsMatchingObject(tx, {
          objectId: object.id,
          classes: classesOf(object.types),
          eventType,
          createdBy: object.createdBy,
        });
  }

  /** LOGISTICS_OBJECT_CREATED of AWB objects to their type subscriptions, LOGISTICS_OBJECT_AVAILABLE to partners. */
  function awbObjectsCreatedNotifications(
    created: readonly NotifiedObject[],
    subscriptions: readonly MatchedSubscription[],
    partners: readonly Partner[],
  ): OneRecordNotification[] {
    const out: OneRecordNotification[] = [];
    for (const s of subscriptions) {
      if (s.topic_type !== "LOGISTICS_OBJECT_TYPE" || !s.event_types.includes(CREATED)) continue;
      for (const object of created) if (isAbout(s, object)) out.push(subscriptionNotification(s, CREATED, object));
    }
    for (const partner of partners)
      for (const object of created)
        out.push({
          to: { endpoint: partner.endpoint, clientId: partner.clientId, subscriptionId: null },
          content: {
            eventType: "LOGISTICS_OBJECT_AVAILABLE",
            logisticsObject: uris.objectUri(object.id),
            logisticsObjectType: object.type,
          },
        });
    return out;
  }

  return {
    /**
     * The ONE Record topics an ingestion's lookup asks about (milestones/sql/subscriptions-of-awbs.sql.ts):
     * the Shipments of the AWBs with new events (`awbs`: those of the milestones stored, and those of
     * `statuses`, recorded now, that are events) and their classes; with first milestones, the
     * Waybill's classes and creations too. No objectIds when there is no new event.
     */
    milestoneTopics(awbs: readonly string[], firstAwbs: readonly string[], statuses: readonly RecordedStatus[]) {
      const first = firstAwbs.length > 0;
      const eventAwbs = new Set([...awbs, ...statusEventsOf(statuses).map((status) => status.awb)]);
      return {
        objectIds: [...eventAwbs].map(shipmentIdOf),
        classes: classesOf(first ? [SHIPMENT, WAYBILL] : [SHIPMENT]),
        eventTypes: first ? [EVENT_RECEIVED, CREATED] : [EVENT_RECEIVED],
      };
    },

    /**
     * An ingestion's notifications, as deliveries for it to queue with its webhooks: for each milestone
     * stored, LOGISTICS_EVENT_RECEIVED to the subscriptions of its AWB's Shipment (or of its class),
     * `event_id` the milestone; likewise for each of `statuses` (recorded now: a status is recorded
     * once, so notified once) that is an event but no milestone, `event_id` null; for each AWB of
     * `firstAwbs` (whose stream was empty before this ingestion), its Waybill and Shipment written now,
     * LOGISTICS_OBJECT_CREATED to the type subscriptions of their classes and LOGISTICS_OBJECT_AVAILABLE
     * to the partners that asked. `found`: the ONE Record subscriptions the ingestion's lookup found
     * for `milestoneTopics`; each is told only of what its subscriber may read now. Runs no statement
     * when nothing was found and no AWB is new. MUST run in the ingestion's transaction, after the
     * milestones and statuses are stored.
     */
    async milestoneDeliveries(
      tx: NotifyTx,
      stored: readonly StoredMilestoneRef[],
      firstAwbs: readonly string[],
      found: readonly SubscriptionOfAwbsRow[],
      statuses: readonly RecordedStatus[],
    ): Promise<NewDelivery[]> {
      // The Shipments' new events: the milestones (their status_event ids), then the statuses that are no milestones.
      const events = [
        ...stored.map((m) => ({ awb: m.awb, id: m.id, milestoneId: m.id })),
        ...statusEventsOf(statuses).map((status) => ({ awb: status.awb, id: status.id, milestoneId: null })),
      ];
      if (events.length === 0) return [];
      const skeletons = [...firstAwbs].sort().flatMap((awb) => [
        { id: waybillIdOf(awb), type: WAYBILL, body: waybillSkeleton(awb), awb },
        { id: shipmentIdOf(awb), type: SHIPMENT, body: shipmentSkeleton(awb), awb },
      ]);
      const written = await store.insertAwbObjects(tx, skeletons, CARRIER_ORGANIZATION_ID);
      const created: NotifiedObject[] = skeletons
        .filter((o) => written.has(o.id))
        .map((o) => ({ ...o, types: [o.type], createdBy: CARRIER_ORGANIZATION_ID, revision: 1 }));
      const awbs = [...new Set(events.map((e) => e.awb))].sort();
      const reading = await store.readingAwbs(
        tx,
        found.map((s) => s.id),
        awbs.map(shipmentIdOf),
      );
      const subscriptions: MatchedSubscription[] = found.map((s) => ({
        id: s.id,
        topic_type: s.topic_type!,
        topic: s.topic,
        event_types: s.list,
        send_body: s.send_body,
        endpoint: s.target,
        client_id: s.client_id,
        readsAll: reading.get(s.id)?.readsAll ?? false,
        granted: reading.get(s.id)?.granted ?? [],
      }));
      const partners = created.length > 0 ? await store.partnersAnnouncedTo(tx) : [];
      const notifications = awbObjectsCreatedNotifications(created, subscriptions, partners);
      const shipments = new Map(created.filter((o) => o.type === SHIPMENT).map((o) => [o.id, o]));
      for (const s of subscriptions) {
        if (!s.event_types.includes(EVENT_RECEIVED)) continue;
        for (const event of events) {
          const shipmentId = shipmentIdOf(event.awb);
          if (!isAbout(s, { id: shipmentId, types: [SHIPMENT] })) continue;
          let shipment = shipments.get(shipmentId);
          if (shipment === undefined && s.send_body) {
            // The Shipment's state, for subscribers that asked for it: read once per AWB, only then.
            shipment = (await store.read(tx, shipmentId)) ?? shipmentOf(event.awb);
            shipments.set(shipmentId, shipment);
          }
          notifications.push({
            ...subscriptionNotification(s, EVENT_RECEIVED, shipment ?? shipmentOf(event.awb), {
              logisticsEvent: uris.eventUri(shipmentId, event.id),
            }),
            milestoneId: event.milestoneId,
          });
        }
      }
      return notifications.map((n) => oneRecordDelivery(n));
    },

    /**
     * An AWB's Waybill or Shipment written now by another way than ingestion (read before any
     * milestone, or posted by the carrier): notified as at the first milestone.
     */
    async awbObjectsCreated(tx: NotifyTx, created: readonly NotifiedObject[]): Promise<void> {
      if (created.length === 0) return;
      const subscriptions = await store.subscriptionsMatchingAwb(tx, {
        objectIds: [],
        classes: classesOf(created.flatMap((o) => o.types)),
        eventTypes: [CREATED],
      });
      const partners = await store.partnersAnnouncedTo(tx);
      await queueOneRecordNotifications(tx, awbObjectsCreatedNotifications(created, subscriptions, partners));
    },

    /** A logistics object created (POST /logistics-objects): LOGISTICS_OBJECT_CREATED to the type subscriptions of its classes. */
    async objectCreated(tx: NotifyTx, object: NotifiedObject): Promise<void> {
      if (object.awb !== null) return this.awbObjectsCreated(tx, [object]);
      const subscriptions = await matching(tx, object, CREATED);
      await queueOneRecordNotifications(
        tx,
        subscriptions.filter((s) => isAbout(s, object)).map((s) => subscriptionNotification(s, CREATED, object)),
      );
    },

    /**
     * A logistics object's new revision (an accepted change, a skeleton completed):
     * LOGISTICS_OBJECT_UPDATED with the properties that differ from `before` (a property of an
     * embedded object changed is its root property, as the specification's note on hasChangedProperty says).
     */
    async objectUpdated(tx: NotifyTx, object: NotifiedObject, before: NodeObject): Promise<void> {
      const changedProperties = changedPropertiesOf(before, object.body);
      const subscriptions = await matching(tx, object, UPDATED);
      await queueOneRecordNotifications(
        tx,
        subscriptions
          .filter((s) => isAbout(s, object))
          .map((s) => subscriptionNotification(s, UPDATED, object, { changedProperties })),
      );
    },

    /** A logistics event posted to an object (not a milestone: ingestion notifies those). */
    async eventReceived(tx: NotifyTx, objectId: string, eventId: string): Promise<void> {
      const object = await store.read(tx, objectId);
      if (object === undefined) return;
      const subscriptions = await matching(tx, object, EVENT_RECEIVED);
      await queueOneRecordNotifications(
        tx,
        subscriptions
          .filter((s) => isAbout(s, object))
          .map((s) =>
            subscriptionNotification(s, EVENT_RECEIVED, object, { logisticsEvent: uris.eventUri(object.id, eventId) }),
          ),
      );
    },

    /**
     * A change request's new status (accepted, rejected, failed, revoked): CHANGE_REQUEST_<status> to
     * its requester when it asked (notifyRequestStatusChange) and where to send it is known.
     */
    async changeRequestStatus(
      tx: NotifyTx,
      request: ChangeRequestRef,
      object: { readonly id: string; readonly type: string },
    ): Promise<void> {
      const status = /^REQUEST_(ACCEPTED|REJECTED|FAILED|REVOKED)$/.exec(request.status)?.[1] as
        RequestStatusName | undefined;
      if (status === undefined || !asksForStatusChanges(request.request)) return;
      const endpoint = await endpointOf(tx, request.requested_by);
      if (endpoint === undefined) return;
      await queueOneRecordNotifications(tx, [
        {
          to: { endpoint, clientId: clientIdOfOrganizationId(request.requested_by) ?? null, subscriptionId: null },
          content: {
            eventType: `CHANGE_REQUEST_${status}`,
            logisticsObject: uris.objectUri(object.id),
            logisticsObjectType: object.type,
            triggeredBy: uris.actionRequestUri(request.id),
          },
        },
      ]);
    },
  };
}

/** A change request as its status notification needs it (action_request's row). */
export interface ChangeRequestRef {
  readonly id: string;
  readonly status: string;
  readonly requested_by: string;
  /** The api:Change, expanded: its api:notifyRequestStatusChange says whether to notify. */
  readonly request: Record<string, unknown>;
}

function asksForStatusChanges(change: Record<string, unknown>): boolean {
  const values = change[`${API}notifyRequestStatusChange`];
  return Array.isArray(values) && values.some((v) => (v as { "@value"?: unknown })["@value"] === true);
}

/** An AWB's Shipment as the first milestone writes it (its state when no other was read). */
function shipmentOf(awb: string): NotifiedObject {
  return {
    id: shipmentIdOf(awb),
    type: SHIPMENT,
    types: [SHIPMENT],
    awb,
    createdBy: CARRIER_ORGANIZATION_ID,
    body: shipmentSkeleton(awb),
    revision: 1,
  };
}

/** The root properties whose values differ between two states (rdf:type for a change of class). */
export function changedPropertiesOf(before: NodeObject, after: NodeObject): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed: string[] = [];
  for (const key of keys) {
    if (key === "@id" || key === HAS_REVISION || key === HAS_LATEST_REVISION) continue;
    if (key.startsWith("@") && key !== "@type") continue;
    if (canonical(before[key]) !== canonical(after[key])) changed.push(key === "@type" ? RDF_TYPE : key);
  }
  return changed.sort();
}

/** A value's JSON with object keys sorted and array order ignored: JSON-LD values are sets. */
function canonical(value: unknown): string {
  if (value === undefined) return "";
  if (Array.isArray(value)) return `[${value.map(canonical).sort().join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

export type NotificationProducers = ReturnType<typeof createNotificationProducers>;
