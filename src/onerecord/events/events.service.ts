import { type DailyQuota, exceeded } from "../quota/daily-quota";
import { createHash } from "node:crypto";
import { derivedPrefixOf, type EventSender } from "../../domain/event-id";
import type { StatusCode as MilestoneState } from "../../domain/status";
import { AppError } from "../../errors";
import type { AlongsideIngestion, MilestoneService } from "../../milestones/milestone.service";
import { canPostEvent, canRead, type ObjectMeta } from "../identity/access-policy";
import type { OneRecordCaller } from "../identity/caller";
import { compactJsonLd, readJsonLdObject } from "../jsonld-codec";
import { CARGO } from "../jsonld-context";
import { mapIds, nameEmbeddedNodes, type NodeObject } from "../jsonld-tree";
import {
  awbObjectKindOf,
  awbOfObjectId,
  createOneRecordUris,
  type OneRecordUris,
  stationCodeOfLocationId,
} from "../uris";
import { parseAwb, wrongCheckDigit } from "../../domain/awb";
import { CARRIER_ORGANIZATION_ID } from "../identity/organizations";
import { flightOfTransportMovementId, type EventNode, withContext } from "./event-mapping";
import { eventCollection, eventNodeOf } from "./event-nodes";
import type { EventListQuery } from "./event-query";
import type { EventOwner, EventStore, NewLogisticsEvent } from "./events.store";
import { insertEvent } from "./events.store";
import { type PostedEvent, readPostedEvent, SHIPMENT } from "./posted-event";
import { milestoneStateOf } from "./status-codes";
import type { NotificationProducers, NotifyTx } from "../notifications-out/notification-producers";

/**
 * Logistics events (docs/ONE-RECORD.md "Logistics events"): an object's list, one event, and posting
 * one. An AWB's Shipment's events are its milestones and carrier statuses as stored, and what was
 * posted to it; a posted event the legacy API delivers (a StatusCode the gateway maps, on an AWB's
 * Shipment) is ingested as a milestone, so callbacks and live subscribers get it like any other.
 */
export interface EventsServiceDeps {
  store: EventStore;
  uris: Pick<OneRecordUris, "base" | "objectUri" | "eventUri" | "eventsUri" | "localIdOf">;
  /**
   * The access facts of one of this server's objects, its grants read for `reader` (the caller) only;
   * undefined when it holds none by that id.
   */
  objectMeta: (objectId: string, reader: string) => Promise<ObjectMeta | undefined>;
  milestones: Pick<MilestoneService, "ingest">;
  /** Whether a code is one of the carrier's stations. */
  isStation: (code: string) => boolean;
  /** AWB_CHECK_DIGIT=enforce: an AWB whose check digit is wrong takes no milestone, as in every other ingestion. */
  enforceCheckDigit: boolean;
  /** Runs `work` in one database transaction (a posted event and its notifications are written together). */
  transaction: <T>(work: (tx: NotifyTx) => Promise<T>) => Promise<T>;
  /** Queues LOGISTICS_EVENT_RECEIVED for a posted event that is no milestone (ingestion notifies milestones). */
  notifications: Pick<NotificationProducers, "eventReceived">;
  /** What one Organization may post of logistics events a day. */
  eventQuota: DailyQuota;
  now?: () => Date;
}

/** A list and when it last changed (null: it has no event). */
export interface EventList {
  readonly body: EventNode;
  readonly lastModified: Date | null;
  /** Changes with every event stored, within a second too (Last-Modified's resolution). */
  readonly etag: string;
}

export interface CreatedEvent {
  readonly location: string;
  /** The event's class (IRI): the Type header. */
  readonly type: string;
  /** Whether it was stored now (false: the same event was posted before). */
  readonly created: boolean;
}

/** An idempotency key past this is refused rather than cut: the milestones' eventId limit. */
const MAX_CLIENT_EVENT_ID = 200;

export function createEventsService(deps: EventsServiceDeps) {
  const { store, uris, milestones, isStation } = deps;
  const now = deps.now ?? (() => new Date());

  /**
   * The access facts of the object whose events are asked for, checked, with whose events they are.
   * An AWB's Shipment's facts are known from its id (the carrier's, readable by scope): its events are
   * read without reading the object, which is looked up only when it has none (it may not exist), or
   * when the caller's scopes do not open it (a grant from an access delegation may).
   */
  function readableOwner(caller: OneRecordCaller, objectId: string): { owner: EventOwner; checked: boolean } {
    const meta = awbShipmentMeta(objectId);
    if (meta === undefined) return { owner: { objectId, awb: null }, checked: false };
    return { owner: { objectId, awb: meta.awb }, checked: canRead(caller, meta) };
  }

  /** The object, when the caller may read it: 404 when this server holds none, 403 when it may not. */
  async function checkReadable(caller: OneRecordCaller, objectId: string): Promise<void> {
    const meta = await deps.objectMeta(objectId, caller.organizationId);
    const byId = awbShipmentMeta(objectId);
    // An AWB's Shipment its scopes do not open answers 403 whether or not the AWB exists (as the awb- alias).
    if (meta === undefined && (byId === undefined || canRead(caller, byId))) throw notFound(objectId);
    if (meta === undefined || !canRead(caller, meta))
      throw accessDenied(objectId, "read this object's logistics events");
  }

  async function objectOrNotFound(objectId: string, reader: string): Promise<ObjectMeta> {
    const meta = await deps.objectMeta(objectId, reader);
    if (meta === undefined) throw notFound(objectId);
    return meta;
  }

  const notFound = (objectId: string) =>
    new AppError("LOGISTICS_OBJECT_NOT_FOUND", `This server holds no logistics object ${objectId}`, {
      extensions: { resource: uris.objectUri(objectId) },
    });

  /** URIs under the base URL as it is now: asked once per answer, not per URI written. */
  const urisNow = () => createOneRecordUris(constant(uris.base()));

  /** Whether ingestion takes an AWB's milestones: AWB_CHECK_DIGIT=enforce refuses a wrong check digit. */
  const acceptsMilestones = (awb: string) => !deps.enforceCheckDigit || parseAwb(awb)!.checkDigitValid;

  const accessDenied = (objectId: string, what: string) =>
    new AppError("ACCESS_DENIED", `The caller may not ${what}`, { extensions: { resource: uris.objectUri(objectId) } });

  return {
    /** A page of an object's events as an api:Collection; `query.limit` 0 for its headers only (HEAD). */
    async list(caller: OneRecordCaller, objectId: string, query: EventListQuery): Promise<EventList> {
      const { owner, checked } = readableOwner(caller, objectId);
      if (!checked) await checkReadable(caller, objectId);
      const page = await store.page(owner, query);
      if (checked && page.allCount === 0) await checkReadable(caller, objectId);
      const at = urisNow();
      const items = withinPageBytes(page.rows.map((row) => eventNodeOf(row, objectId, owner.awb, at)));
      return {
        body: eventCollection(at.eventsUri(objectId), page.total, items),
        lastModified: page.lastModified,
        etag: `W/"${page.allCount}-${page.lastModified?.getTime() ?? 0}"`,
      };
    },

    /** One event with its context, and when it was stored. */
    async get(
      caller: OneRecordCaller,
      objectId: string,
      eventId: string,
    ): Promise<{ body: EventNode; type: string; lastModified: Date }> {
      const { owner, checked } = readableOwner(caller, objectId);
      if (!checked) await checkReadable(caller, objectId);
      const row = await store.byId(owner, eventId);
      if (row === undefined) {
        if (checked) await checkReadable(caller, objectId);
        throw new AppError("LOGISTICS_EVENT_NOT_FOUND", `${objectId} has no logistics event ${eventId}`, {
          extensions: { resource: uris.eventUri(objectId, eventId) },
        });
      }
      const node = eventNodeOf(row, objectId, owner.awb, urisNow());
      return { body: withContext(node), type: mostSpecificType(node), lastModified: row.creation_date };
    },

    /**
     * Stores a posted event (any of JSON-LD's three forms): a milestone through the milestone service
     * when it is one, else in logistics_event. The same POST again creates nothing and answers the
     * same Location (docs/ONE-RECORD.md "Posting an event twice").
     */
    async post(caller: OneRecordCaller, objectId: string, body: unknown): Promise<CreatedEvent> {
      // An AWB's Shipment takes its first milestone before the gateway knows the AWB, as the legacy
      // ingestion does; it must exist for any other event.
      const awbShipment = awbShipmentMeta(objectId);
      const meta = awbShipment ?? (await objectOrNotFound(objectId, caller.organizationId));
      if (!canPostEvent(caller, meta)) throw accessDenied(objectId, "add logistics events to this object");
      const root = await readJsonLdObject(body);
      const event = readPostedEvent(root, { uri: uris.objectUri(objectId), type: meta.type });
      const owner = ownerOf(meta);
      const state =
        owner.awb !== null && event.statusCode !== null
          ? milestoneStateOf(event.statusCode, event.timeType)
          : undefined;
      if (awbShipment !== undefined && state === undefined) await objectOrNotFound(objectId, caller.organizationId);
      if (awbShipment !== undefined && state !== undefined && !acceptsMilestones(awbShipment.awb))
        throw invalidEvent(`${CARGO}eventFor`, `${wrongCheckDigit(awbShipment.awb)} (AWB_CHECK_DIGIT=enforce)`);
      const stored = await storedBodyOf(event.node);
      // Every event that passes its checks spends (a repeat of one stored too), before its transaction.
      if (!(await store.spendQuota(deps.eventQuota, caller.organizationId, Buffer.byteLength(JSON.stringify(stored)))))
        throw exceeded(deps.eventQuota, now());
      const creationDate = now();
      const record = (id: string): NewLogisticsEvent => ({
        objectId,
        id,
        eventCode: event.codeIri,
        eventDate: event.eventDate,
        creationDate,
        body: stored,
        createdBy: caller.organizationId,
      });
      if (state !== undefined && owner.awb !== null) {
        const [result] = await milestones.ingest(
          [milestoneOf(event, owner.awb, state)],
          creationDate,
          [],
          senderOf(caller),
          keepPostedBody(record),
        );
        return { location: uris.eventUri(objectId, result!.eventId), type: event.type, created: !result!.duplicate };
      }
      const id = postedEventId(objectId, caller.organizationId, event, root);
      const created = await deps.transaction(async (tx) => {
        const stored = await store.insert(record(id), tx);
        if (stored) await deps.notifications.eventReceived(tx, objectId, id);
        return stored;
      });
      return { location: uris.eventUri(objectId, id), type: event.type, created };
    },
  };

  /** The milestone a posted event is: its station and flight when it names this server's Location and TransportMovement. */
  function milestoneOf(event: PostedEvent, awb: string, state: MilestoneState) {
    const clientId = event.clientId;
    if (clientId !== null && (clientId.length > MAX_CLIENT_EVENT_ID || derivedPrefixOf(clientId) !== undefined))
      throw invalidEvent(
        "@id",
        `an event's @id is its idempotency key: at most ${MAX_CLIENT_EVENT_ID} characters, not starting with fsu: or xfsu: (the ids of carrier messages)`,
      );
    return {
      eventId: clientId,
      awb,
      state,
      occurredAt: event.eventDate,
      // A TOA announces the time of arrival: the event's expected date.
      toaTimestamp: state === "TOA" ? event.eventDate : null,
      station: stationOf(event.locationUri),
      flight: flightOf(event.transportMovementUri),
    };
  }

  function stationOf(locationUri: string | null): string | null {
    const localId = locationUri === null ? undefined : uris.localIdOf(locationUri);
    if (localId === undefined) return null;
    const code = stationCodeOfLocationId(localId);
    if (code === undefined) return null; // a Location of a client's own, no station
    if (!isStation(code))
      throw invalidEvent(
        "https://onerecord.iata.org/ns/cargo#eventLocation",
        `${locationUri} is none of the carrier's stations`,
      );
    return code;
  }

  function flightOf(movementUri: string | null): string | null {
    const localId = movementUri === null ? undefined : uris.localIdOf(movementUri);
    return localId === undefined ? null : (flightOfTransportMovementId(localId) ?? null);
  }

  /** The posted tree as logistics_event keeps it: compacted, embedded nodes named, this server's URIs as local ids. */
  async function storedBodyOf(node: NodeObject): Promise<Record<string, unknown>> {
    const named = structuredClone(node);
    // A node naming one of this server's objects is a link: an event may not say what that object is.
    nameEmbeddedNodes(named, {
      isOwn: (id) => uris.localIdOf(id) !== undefined,
      refuse: (id) =>
        new AppError("INVALID_LOGISTICS_OBJECT", `An event cannot describe ${id}: link it by its @id alone`, {
          errors: [{ field: "@id", message: `${id} is a logistics object of this server` }],
        }),
    });
    const compacted = await compactJsonLd(named);
    delete compacted["@context"];
    const bytes = Buffer.byteLength(JSON.stringify(compacted));
    if (bytes > MAX_POSTED_EVENT_BYTES)
      throw new AppError(
        "PAYLOAD_TOO_LARGE",
        `The event takes ${bytes} bytes stored; one logistics event may take ${MAX_POSTED_EVENT_BYTES} (MAX_POSTED_EVENT_BYTES)`,
      );
    return mapIds(compacted, (id) => uris.localIdOf(id));
  }
}

/** The milestone's posted body, written in the ingestion's transaction when the milestone is new. */
function keepPostedBody(record: (id: string) => NewLogisticsEvent): AlongsideIngestion {
  return async (tx, results) => {
    const [result] = results;
    if (result && !result.duplicate) await insertEvent(tx, record(result.eventId));
  };
}

/** Whose eventIds these are: an API client's own (as on the legacy route), or an agent's Organization's. */
function senderOf(caller: OneRecordCaller): EventSender {
  return { clientId: caller.principal?.clientId ?? caller.organizationId };
}

/**
 * A posted event's id, derived from what makes it the same event: its object, who posted it, and its
 * @id when it has one, else its whole content. A retried POST finds its event stored.
 */
function postedEventId(objectId: string, organizationId: string, event: PostedEvent, root: NodeObject): string {
  const identity = event.clientId ?? JSON.stringify(root);
  const hex = createHash("sha256").update(`${objectId}\n${organizationId}\n${identity}`).digest("hex");
  // A name-based UUID's layout (version 5's nibbles over SHA-256 rather than SHA-1).
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** An AWB's Shipment's access facts, from its id alone: the carrier's, readable by scope (access-policy.ts). */
function awbShipmentMeta(objectId: string): (ObjectMeta & { awb: string }) | undefined {
  const awb = awbObjectKindOf(objectId) === "shipment" ? awbOfObjectId(objectId) : undefined;
  return awb === undefined ? undefined : { id: objectId, type: SHIPMENT, awb, createdBy: CARRIER_ORGANIZATION_ID };
}

const constant = (value: string) => () => value;

function ownerOf(meta: ObjectMeta): EventOwner {
  const awb = awbObjectKindOf(meta.id) === "shipment" ? (meta.awb ?? null) : null;
  return { objectId: meta.id, awb };
}

function mostSpecificType(node: EventNode): string {
  const types: unknown = node["@type"];
  const first: unknown = Array.isArray(types) ? types[0] : types;
  return typeof first === "string" ? first.replace(/^cargo:/, CARGO) : "";
}

function invalidEvent(field: string, message: string): AppError {
  return new AppError("INVALID_LOGISTICS_OBJECT", "The body is not a valid logistics event", {
    errors: [{ field, message }],
  });
}

export type EventsService = ReturnType<typeof createEventsService>;

/** The most one posted logistics event may take stored (its compacted JSON): a status, its place and figures. */
export const MAX_POSTED_EVENT_BYTES = 8 * 1024;
/**
 * The most one page of the events list holds (the events' JSON): a page stops before the event that
 * would pass it, whatever `limit` asked, and `hasTotalItems` tells the client there is more to ask
 * with `skip`. Always at least one event.
 */
export const MAX_EVENTS_PAGE_BYTES = 2 * 1024 * 1024;

function withinPageBytes<T>(items: readonly T[]): T[] {
  let bytes = 0;
  const kept: T[] = [];
  for (const item of items) {
    bytes += Buffer.byteLength(JSON.stringify(item));
    if (kept.length > 0 && bytes > MAX_EVENTS_PAGE_BYTES) break;
    kept.push(item);
  }
  return kept;
}
