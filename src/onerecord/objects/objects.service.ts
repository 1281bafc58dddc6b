import { randomUUID } from "node:crypto";
import { parseAwb } from "../../domain/awb";
import { AppError } from "../../errors";
import { canRead, canWrite, canCreate, type ObjectMeta } from "../identity/access-policy";
import type { OneRecordCaller } from "../identity/caller";
import { CARRIER_ORGANIZATION_ID, clientIdOfOrganizationId } from "../identity/organizations";
import { XSD } from "../jsonld-context";
import {
  isBlankLabel,
  isLocalId,
  isReference,
  literalOf,
  mapIds,
  nameEmbeddedNodes,
  type NodeObject,
  nodesOf,
  typesOf,
  valuesOf,
} from "../jsonld-tree";
import {
  awbObjectKindOf,
  awbOfObjectId,
  type OneRecordUris,
  shipmentIdOf,
  stationCodeOfLocationId,
  waybillIdOf,
} from "../uris";
import { type Change, applyChange, ChangeNotApplicable, changeNode, checkOperations, readChange } from "./change";
import {
  checkLogisticsObject,
  HAS_LATEST_REVISION,
  HAS_REVISION,
  mostSpecificLogisticsObjectType,
} from "./object-model";
import { MAX_CHANGE_REQUEST_BYTES } from "./change-bounds";
import { checkOntology } from "./ontology-validation";
import { type DailyQuota, exceeded } from "../quota/daily-quota";
import type { ActionRequestRow, ActionRequestStatus, ObjectStore, ObjectTx, StoredObject } from "./objects.store";
import type { NotificationProducers } from "../notifications-out/notification-producers";
import type { NotifiedObject } from "../notifications-out/notifications-out.store";
import {
  carrierOrganization,
  clientOrganization,
  HOUSE,
  isSkeleton,
  MASTER,
  SHIPMENT,
  SHIPMENT_WAYBILL,
  shipmentSkeleton,
  stationLocation,
  transportMovement,
  WAYBILL,
  WAYBILL_NUMBER,
  WAYBILL_PREFIX,
  WAYBILL_SHIPMENT,
  WAYBILL_TYPE,
  waybillSkeleton,
} from "./reference-objects";

/** A logistics object as answered: its state (expanded, absolute URIs) and what the headers say. */
export interface ObjectState {
  readonly id: string;
  readonly type: string;
  readonly revision: number;
  readonly latestRevision: number;
  readonly lastModified: Date;
  /** With api:hasRevision and api:hasLatestRevision. */
  readonly body: NodeObject;
}

/** A logistics object as the rules and the store see it. */
interface Held {
  readonly meta: ObjectMeta;
  readonly row: StoredObject | undefined;
  readonly body: NodeObject;
  readonly revision: number;
  readonly lastModified: Date;
}

export interface ObjectServiceDeps {
  readonly store: ObjectStore;
  readonly uris: OneRecordUris;
  /** A station of the carrier by its IATA code; undefined for any other code. */
  stationOf(code: string): { code: string; name: string } | undefined;
  /** config.oneRecord.organizationName */
  readonly carrierName: string;
  /** An API client by its id: its name and when it was registered; undefined when there is none. */
  clientOf(clientId: string): Promise<{ name: string; createdAt: Date } | undefined>;
  /** Whether a holder's own change request is applied as it is made, instead of waiting for its decision. */
  readonly applyHolderChanges: boolean;
  /** What one Organization may store of change requests a day. */
  readonly changeRequestQuota: DailyQuota;
  /** What one Organization may create of logistics objects a day. */
  readonly objectQuota: DailyQuota;
  /** Queues the ONE Record notifications of creations, changes and change requests' statuses, in their transactions. */
  readonly notifications: Pick<
    NotificationProducers,
    "objectCreated" | "awbObjectsCreated" | "objectUpdated" | "changeRequestStatus"
  >;
}

/** At most this many linked objects are looked up (and so embedded) for one answer (embedded=true). */
const MAX_EMBEDDED_OBJECTS = 100;
const CHANGE_REQUEST = "CHANGE_REQUEST";
/** Change requests one requester may have pending on one object: each holds up to a whole body. */
export const MAX_PENDING_CHANGE_REQUESTS = 20;

/**
 * Logistics objects (create, read at a revision or a time, embedded) and their change requests
 * (docs/ONE-RECORD.md "Logistics objects", "Action requests"). Bodies are expanded JSON-LD trees; the
 * routes read and compact them.
 */
export function createObjectService(deps: ObjectServiceDeps) {
  const { store, uris, notifications } = deps;
  // Reference data answered from the station data and the configuration: never stored, revision 1.
  const referenceDataSince = new Date();

  const absolute = (body: NodeObject, at?: string) =>
    mapIds(body, (id) => (isLocalId(id) ? `${uris.objectUri(id)}${at === undefined ? "" : `?at=${at}`}` : undefined));
  const localized = (body: NodeObject) => mapIds(body, (id) => uris.localIdOf(id));

  async function referenceObject(id: string): Promise<Held | undefined> {
    if (id === CARRIER_ORGANIZATION_ID) return referenceHeld(carrierOrganization(id, deps.carrierName));
    const code = stationCodeOfLocationId(id);
    const station = code === undefined ? undefined : deps.stationOf(code);
    if (station) return referenceHeld(stationLocation(station));
    const clientId = clientIdOfOrganizationId(id);
    const client = clientId === undefined ? undefined : await deps.clientOf(clientId);
    // A client's name never changes: its Organization is as it was when the client was registered.
    if (client) return referenceHeld(clientOrganization(id, client.name), client.createdAt);
    const movement = transportMovement(id);
    if (movement) return referenceHeld(movement);
    return undefined;
  }

  function referenceHeld(body: NodeObject, since = referenceDataSince): Held {
    const id = body["@id"] as string;
    const type = typesOf(body)[0]!;
    return {
      meta: { id, type, createdBy: CARRIER_ORGANIZATION_ID },
      row: undefined,
      body,
      revision: 1,
      lastModified: since,
    };
  }

  /**
   * Reference data (never stored: stations, the carrier's and the clients' Organizations, flights'
   * TransportMovements) is read by every authenticated caller: a client's Organization is who the
   * action requests others see name; a TransportMovement says no more than its id.
   */
  const mayRead = (caller: OneRecordCaller, held: Held) => held.row === undefined || canRead(caller, held.meta);

  const heldOf = (row: StoredObject): Held => ({
    meta: {
      id: row.id,
      type: row.type,
      awb: row.awb,
      createdBy: row.created_by,
      readers: row.readers,
      delegates: row.delegates,
    },
    row,
    body: row.body,
    revision: row.revision,
    lastModified: row.last_modified,
  });

  /**
   * Writes an AWB's skeletons when the gateway knows the AWB; false when it does not. Their creation
   * is notified as at a first milestone (an AWB whose first milestone came before part 2, or known
   * only from statuses that are no milestones): whoever writes an AWB's objects first notifies it.
   */
  async function ensureAwbObjects(awb: string): Promise<boolean> {
    const waybill = { id: waybillIdOf(awb), type: WAYBILL, body: waybillSkeleton(awb) };
    const shipment = { id: shipmentIdOf(awb), type: SHIPMENT, body: shipmentSkeleton(awb) };
    return store.transaction(async (tx) => {
      const { known, created } = await store.ensureAwbObjects(awb, CARRIER_ORGANIZATION_ID, waybill, shipment, tx);
      const written = [waybill, shipment].filter((o) => created.includes(o.id));
      await notifications.awbObjectsCreated(
        tx,
        written.map((o) => ({ ...o, types: [o.type], awb, createdBy: CARRIER_ORGANIZATION_ID, revision: 1 })),
      );
      return known;
    });
  }

  /**
   * The object, stored or reference data; an AWB's objects written on first use. With `reader`, its
   * grants are read for that Organization only (one index probe, however many it has).
   */
  async function find(id: string, reader?: string): Promise<Held | undefined> {
    const reference = await referenceObject(id);
    if (reference) return reference;
    const read = () => (reader === undefined ? store.read(id) : store.readAs(id, reader));
    const row = await read();
    if (row) return heldOf(row);
    const awb = awbOfObjectId(id);
    if (awb === undefined || !(await ensureAwbObjects(awb))) return undefined;
    const created = await read();
    return created && heldOf(created);
  }

  async function readable(caller: OneRecordCaller, id: string): Promise<Held> {
    const held = await find(id, caller.organizationId);
    if (!held) throw notFound(id);
    if (!mayRead(caller, held))
      throw new AppError("ACCESS_DENIED", `You may not read ${uris.objectUri(id)}`, {
        extensions: { resource: uris.objectUri(id) },
      });
    return held;
  }

  const notFound = (id: string) =>
    new AppError("LOGISTICS_OBJECT_NOT_FOUND", `No logistics object ${uris.objectUri(id)}`, {
      extensions: { resource: uris.objectUri(id) },
    });

  /** The state at `at` (undefined: the latest) as stored: revision, body, time. */
  async function stateAt(held: Held, at: Date | undefined) {
    if (at === undefined || held.row === undefined)
      return { revision: held.revision, body: held.body, lastModified: held.lastModified };
    const revision = await store.revisionAt(held.meta.id, at);
    if (!revision) return undefined;
    return { revision: revision.revision, body: revision.body, lastModified: revision.modified_at };
  }

  function withRevisions(body: NodeObject, revision: number, latest: number): NodeObject {
    return {
      ...body,
      [HAS_REVISION]: [{ "@value": String(revision), "@type": `${XSD}positiveInteger` }],
      [HAS_LATEST_REVISION]: [{ "@value": String(latest), "@type": `${XSD}positiveInteger` }],
    };
  }

  /** Replaces links to this server's objects the caller may read with those objects, at the same time. */
  async function embedLinked(caller: OneRecordCaller, root: NodeObject, at: Date | undefined): Promise<NodeObject> {
    const seen = new Set<string>([root["@id"] as string]);
    let budget = MAX_EMBEDDED_OBJECTS;
    const visit = async (node: NodeObject): Promise<NodeObject> => {
      const out: NodeObject = {};
      for (const [key, value] of Object.entries(node)) {
        if (key.startsWith("@") || !Array.isArray(value)) {
          out[key] = value;
          continue;
        }
        out[key] = await Promise.all(
          value.map(async (item: unknown) => {
            if (!isReference(item))
              return item && typeof item === "object" && !("@value" in item) ? visit(item as NodeObject) : item;
            const id = item["@id"];
            if (!isLocalId(id) || seen.has(id) || budget <= 0) return item;
            seen.add(id);
            // Spent before the lookup, not after: the items of one list are looked up together, and each
            // must find the budget already reduced by the others (at most MAX_EMBEDDED_OBJECTS lookups).
            budget--;
            const held = await find(id, caller.organizationId);
            if (!held || !mayRead(caller, held)) return item;
            const state = await stateAt(held, at);
            if (!state) return item;
            return visit(withRevisions(state.body, state.revision, held.revision));
          }),
        );
      }
      return out;
    };
    return visit(root);
  }

  /** Creates the object or, for an AWB's Waybill, completes its skeleton; answers its id, type and revision. */
  async function create(
    caller: OneRecordCaller,
    given: NodeObject,
  ): Promise<{ id: string; type: string; revision: number }> {
    if (!canCreate(caller))
      throw new AppError("INSUFFICIENT_SCOPE", "Creating logistics objects takes the objects:write scope");
    const type = checkLogisticsObject(given);
    checkOntology(given);
    const root = structuredClone(given);
    delete root[HAS_REVISION];
    delete root[HAS_LATEST_REVISION];
    // The id asked for when @id is a URI of this server; another server's URI is not ours to publish:
    // the object gets an id of its own, as one sent without @id.
    const givenId = root["@id"];
    const id = typeof givenId === "string" ? uris.localIdOf(givenId) : undefined;
    refuseOthersNodes(root, awbOf(root));
    nameEmbeddedNodes(root);
    const body = localized(root);
    const awb = awbOf(body);
    if (awb !== undefined) return completeAwbObjects(awb, body, id);
    if (id !== undefined && isReservedId(id))
      throw new AppError(
        "INVALID_LOGISTICS_OBJECT",
        `${id} is reserved for the AWB's, stations', organizations' and flights' objects`,
      );
    const newId = id ?? randomUUID();
    body["@id"] = newId;
    const types = typesOf(body);
    const object = { id: newId, type, types, body, awb: null, createdBy: caller.organizationId };
    // Spent before the write's transaction, so no transaction waits on the quota's row.
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (!(await store.spendQuota(deps.objectQuota, caller.organizationId, bytes)))
      throw exceeded(deps.objectQuota, new Date());
    const created = await store.transaction(async (tx) => {
      const row = await store.insert(object, tx);
      if (row) await notifications.objectCreated(tx, { ...object, revision: 1 });
      return row;
    });
    if (!created) throw exists(newId);
    return { id: newId, type, revision: 1 };
  }

  /**
   * An embedded node may not redefine one of this server's objects (another client's, the carrier's):
   * only the object itself, or an AWB's Shipment embedded in its Waybill, may carry properties. A typed
   * link to one ({@id, @type}) is a link: its type is the object's to say. Blank nodes get ids of their
   * own (nameEmbeddedNodes); any other IRI is kept.
   */
  function refuseOthersNodes(root: NodeObject, awb: string | undefined): void {
    const own = new Set([root["@id"], ...(awb === undefined ? [] : [waybillIdOf(awb), shipmentIdOf(awb)])]);
    for (const node of nodesOf(root).slice(1)) {
      const id = node["@id"];
      if (typeof id !== "string" || isBlankLabel(id)) continue;
      const local = isLocalId(id) ? id : uris.localIdOf(id);
      if (local === undefined || own.has(id) || own.has(local)) continue;
      if (Object.keys(node).every((key) => key === "@id" || key === "@type")) {
        delete node["@type"];
        continue;
      }
      throw new AppError("INVALID_LOGISTICS_OBJECT", `An embedded object cannot be ${uris.objectUri(local)}: link it`, {
        errors: [{ field: "@id", message: `${id} is another logistics object of this server` }],
      });
    }
  }

  const exists = (id: string) =>
    new AppError("LOGISTICS_OBJECT_EXISTS", `${uris.objectUri(id)} exists`, {
      extensions: { resource: uris.objectUri(id) },
    });

  /** The AWB a posted Waybill names (prefix and number, not a house waybill); refuses a malformed one. */
  function awbOf(body: NodeObject): string | undefined {
    if (!typesOf(body).includes(WAYBILL)) return undefined;
    const prefix = literalOf(body, WAYBILL_PREFIX);
    const number = literalOf(body, WAYBILL_NUMBER);
    if (prefix === undefined || number === undefined) return undefined;
    if (valuesOf(body, WAYBILL_TYPE).some((v) => v["@id"] === HOUSE)) return undefined;
    const parsed = parseAwb(`${prefix}-${number}`);
    if (!parsed)
      throw new AppError(
        "INVALID_LOGISTICS_OBJECT",
        `waybillPrefix ${prefix} and waybillNumber ${number} are not an AWB`,
        {
          errors: [
            { field: WAYBILL_NUMBER, message: "a 3-digit prefix and an 8-digit serial, such as 020 and 12345675" },
          ],
        },
      );
    return parsed.canonical;
  }

  /**
   * A Waybill with an AWB takes the AWB's ids: it completes the skeleton (a new revision, same URI)
   * instead of duplicating it, and so does the Shipment it embeds. One the carrier already described is
   * not replaced (409): change it with a PATCH.
   */
  async function completeAwbObjects(awb: string, waybill: NodeObject, givenId: string | undefined) {
    const waybillId = waybillIdOf(awb);
    const shipmentId = shipmentIdOf(awb);
    if (givenId !== undefined && givenId !== waybillId)
      throw new AppError("INVALID_LOGISTICS_OBJECT", `The Waybill of AWB ${awb} is ${uris.objectUri(waybillId)}`);
    waybill["@id"] = waybillId;
    if (valuesOf(waybill, WAYBILL_TYPE).length === 0) waybill[WAYBILL_TYPE] = [{ "@id": MASTER }];
    const linked = valuesOf(waybill, WAYBILL_SHIPMENT);
    let shipment: NodeObject | undefined;
    if (linked.length > 1 || (linked[0] && !isReference(linked[0]) && !typesOf(linked[0]).includes(SHIPMENT)))
      throw new AppError("INVALID_LOGISTICS_OBJECT", `A Waybill has one Shipment`);
    if (linked[0] && isReference(linked[0]) && linked[0]["@id"] !== shipmentId)
      throw new AppError(
        "INVALID_LOGISTICS_OBJECT",
        `The Shipment of AWB ${awb} is ${uris.objectUri(shipmentId)}: link it, or embed the Shipment to describe it`,
      );
    if (linked[0] && !isReference(linked[0]))
      shipment = { ...linked[0], "@id": shipmentId, [SHIPMENT_WAYBILL]: [{ "@id": waybillId }] };
    waybill[WAYBILL_SHIPMENT] = [{ "@id": shipmentId }];
    await ensureAwbObjects(awb);
    return store.transaction(async (tx) => {
      const created: NotifiedObject[] = [];
      const written = await completeOne(waybillId, WAYBILL, waybill, awb, tx, created);
      if (shipment) await completeOne(shipmentId, SHIPMENT, shipment, awb, tx, created);
      else {
        const skeleton = {
          id: shipmentId,
          type: SHIPMENT,
          types: [SHIPMENT],
          body: shipmentSkeleton(awb),
          awb,
          createdBy: CARRIER_ORGANIZATION_ID,
        };
        if (await store.insert(skeleton, tx)) created.push({ ...skeleton, revision: 1 });
      }
      await notifications.awbObjectsCreated(tx, created);
      return { id: waybillId, type: WAYBILL, revision: written };
    });
  }

  /**
   * Writes an AWB's object as posted: a new object (added to `created`, notified with the others by
   * the caller) or the skeleton's next revision (notified as an update here).
   */
  async function completeOne(
    id: string,
    type: string,
    body: NodeObject,
    awb: string,
    tx: ObjectTx,
    created: NotifiedObject[],
  ): Promise<number> {
    const types = typesOf(body);
    const object = { id, type, types, body, awb, createdBy: CARRIER_ORGANIZATION_ID };
    const existing = await store.read(id, tx);
    if (!existing) {
      if (!(await store.insert(object, tx))) throw exists(id);
      created.push({ ...object, revision: 1 });
      return 1;
    }
    if (!isSkeleton(existing.body)) throw exists(id);
    const written = await store.writeRevision({ id, revision: existing.revision, type, types, body }, null, tx);
    if (!written) throw exists(id);
    await notifications.objectUpdated(tx, { ...object, revision: written.revision }, existing.body);
    return written.revision;
  }

  return {
    create,
    ensureAwbObjects,

    /**
     * What the access rules need of an object (events: canRead, canPostEvent); undefined when there is
     * none. With `reader`, its grants are read for that Organization only: pass the caller's.
     */
    async metaOf(id: string, reader?: string): Promise<ObjectMeta | undefined> {
      return (await find(id, reader))?.meta;
    },

    /**
     * The object as the caller may read it: its latest state or the one it had `at`, with the
     * objects it links embedded when asked (each at the same time, each only if readable).
     */
    async read(
      caller: OneRecordCaller,
      id: string,
      { at, atText, embedded = false }: { at?: Date; atText?: string; embedded?: boolean } = {},
    ): Promise<ObjectState> {
      const held = await readable(caller, id);
      const state = await stateAt(held, at);
      if (!state)
        throw new AppError(
          "LOGISTICS_OBJECT_NOT_FOUND",
          `${uris.objectUri(id)} did not exist at ${atText ?? "that time"}`,
          {
            extensions: { resource: uris.objectUri(id) },
          },
        );
      let body = withRevisions(state.body, state.revision, held.revision);
      if (embedded) body = await embedLinked(caller, body, at);
      return {
        id,
        type: mostSpecificLogisticsObjectType(typesOf(state.body)) ?? held.meta.type,
        revision: state.revision,
        latestRevision: held.revision,
        lastModified: state.lastModified,
        body: absolute(body, at === undefined ? undefined : atText),
      };
    },

    /** The awb-<prefix>-<serial> alias: the Waybill's id, once the gateway knows the AWB. */
    async waybillOfAwb(awb: string): Promise<string> {
      const id = waybillIdOf(awb);
      if (!(await find(id))) throw notFound(`awb-${awb}`);
      return id;
    },

    /**
     * A change request on an object the caller may read: left pending for the holder's decision (a
     * holder's own is applied at once with `applyHolderChanges`). One that names another object is
     * refused; one against another revision than the latest fails.
     */
    async requestChange(caller: OneRecordCaller, id: string, change: Change): Promise<ActionRequestRow> {
      const held = await readable(caller, id);
      if (!held.row)
        throw new AppError(
          "ACCESS_DENIED",
          `${uris.objectUri(id)} is the carrier's reference data: it takes no changes`,
          {
            extensions: { resource: uris.objectUri(id) },
          },
        );
      if (uris.localIdOf(change.objectUri) !== id)
        throw new AppError(
          "INVALID_LOGISTICS_OBJECT",
          `api:hasLogisticsObject ${change.objectUri} is not the object changed, ${uris.objectUri(id)}`,
          { extensions: { resource: uris.objectUri(id) } },
        );
      // Checked before anything is stored: a change that can never apply is refused (400), not kept.
      // Its subjects exist at the revision it names when that is the latest; an older one fails below.
      const nodeIds = new Set(nodesOf(held.body).map((node) => node["@id"]));
      checkOperations(
        change.operations,
        change.revision === held.revision ? (subject) => isRootOf(id, subject) || nodeIds.has(subject) : undefined,
      );
      if (change.revision === held.revision) refuseOutsideOntology(held.body, id, change);
      const applyNow = deps.applyHolderChanges && canWrite(caller, held.meta);
      if (!applyNow && (await store.pendingActionRequests(id, caller.organizationId)) >= MAX_PENDING_CHANGE_REQUESTS)
        throw new AppError(
          "PENDING_CHANGE_LIMIT_REACHED",
          `You have ${MAX_PENDING_CHANGE_REQUESTS} change requests pending on ${uris.objectUri(id)}: wait for the holder to decide, or revoke some`,
          { extensions: { resource: uris.objectUri(id) } },
        );
      const requestId = randomUUID();
      const request = JSON.stringify(localized(changeNode(change, `internal:${requestId}-change`)));
      if (Buffer.byteLength(request) > MAX_CHANGE_REQUEST_BYTES)
        throw new AppError(
          "PAYLOAD_TOO_LARGE",
          `The change takes ${Buffer.byteLength(request)} bytes stored; one change request may take ${MAX_CHANGE_REQUEST_BYTES} (MAX_CHANGE_REQUEST_BYTES): split it`,
        );
      // Every change request is kept (an outdated one too, failed, as the audit trail shows it): each
      // spends its requester's daily quota, in the statement that stores it.
      const quota = deps.changeRequestQuota;
      if (Buffer.byteLength(request) > quota.bytesPerDay)
        throw exceeded(quota, new Date(), `this one is ${Buffer.byteLength(request)} bytes`);
      const row = await store.insertActionRequest(
        {
          id: requestId,
          kind: CHANGE_REQUEST,
          objectId: id,
          request,
          requestedBy: caller.organizationId,
          revision: change.revision,
          operations: change.operations.length,
        },
        quota,
      );
      if (row === undefined) throw exceeded(quota, new Date());
      if (change.revision !== held.revision)
        return fail(row, caller.organizationId, outdated(change.revision, held.revision), 409, held.meta);
      return applyNow ? accept(row, change, caller.organizationId) : row;
    },

    async actionRequest(caller: OneRecordCaller, id: string): Promise<ActionRequestRow> {
      return (await visibleActionRequest(caller, id)).row;
    },

    /** The holder accepts (the change is applied) or rejects a pending change request. */
    async decide(
      caller: OneRecordCaller,
      id: string,
      status: "REQUEST_ACCEPTED" | "REQUEST_REJECTED",
    ): Promise<ActionRequestRow> {
      const { row, object } = await visibleActionRequest(caller, id);
      if (!canWrite(caller, object.meta))
        throw new AppError("ACCESS_DENIED", "Only the holder of the logistics object decides on its change requests", {
          extensions: { resource: uris.actionRequestUri(id) },
        });
      if (row.status !== "REQUEST_PENDING") throw decided(row);
      if (status === "REQUEST_REJECTED")
        return (
          (await decideNotified({ id, status, decidedBy: caller.organizationId }, object.meta)) ??
          Promise.reject(decided(row))
        );
      const change = readChange(absolute(row.request));
      if (row.revision !== object.revision)
        return fail(row, caller.organizationId, outdated(row.revision, object.revision), 409, object.meta);
      return accept(row, change, caller.organizationId);
    },

    /** The requester, or the holder, withdraws a pending request. */
    async revoke(caller: OneRecordCaller, id: string): Promise<ActionRequestRow> {
      const { row, object } = await visibleActionRequest(caller, id);
      if (row.requested_by !== caller.organizationId && !canWrite(caller, object.meta))
        throw new AppError("ACCESS_DENIED", "Only the requester or the holder revokes an action request", {
          extensions: { resource: uris.actionRequestUri(id) },
        });
      if (row.status !== "REQUEST_PENDING") throw decided(row);
      const revoked = await decideNotified(
        { id, status: "REQUEST_REVOKED", decidedBy: caller.organizationId },
        object.meta,
      );
      if (!revoked) throw decided(row);
      return revoked;
    },

    /** The object's change requests, as its audit trail lists them, and its latest revision. */
    async auditTrail(
      caller: OneRecordCaller,
      id: string,
      filter: { from: Date | null; to: Date | null; statuses: string[] | null },
    ): Promise<{ requests: ActionRequestRow[]; latestRevision: number }> {
      const held = await readable(caller, id);
      const requests = held.row ? await store.actionRequestsOf({ objectId: id, ...filter }) : [];
      return { requests, latestRevision: held.revision };
    },
  };

  async function visibleActionRequest(caller: OneRecordCaller, id: string) {
    const missing = () =>
      new AppError("ACTION_REQUEST_NOT_FOUND", `No action request ${uris.actionRequestUri(id)}`, {
        extensions: { resource: uris.actionRequestUri(id) },
      });
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw missing();
    const row = await store.readActionRequest(id);
    if (!row) throw missing();
    const object = await find(row.object_id, caller.organizationId);
    if (!object) throw missing();
    if (row.requested_by !== caller.organizationId && !canRead(caller, object.meta))
      throw new AppError("ACCESS_DENIED", `You may not read ${uris.actionRequestUri(id)}`, {
        extensions: { resource: uris.actionRequestUri(id) },
      });
    return { row, object };
  }

  /**
   * Applies an accepted change: the object's next revision and the request's acceptance in one
   * transaction, the other requests pending against the same revision rejected. A change that does
   * not apply, or an object that moved on meanwhile, leaves the request failed with the reason.
   */
  async function accept(row: ActionRequestRow, change: Change, decidedBy: string): Promise<ActionRequestRow> {
    const object = await store.read(row.object_id);
    if (!object) throw new AppError("LOGISTICS_OBJECT_NOT_FOUND", `No logistics object ${row.object_id}`);
    const ref = { id: object.id, type: object.type };
    if (object.revision !== row.revision)
      return fail(row, decidedBy, outdated(row.revision, object.revision), 409, ref);
    let body: NodeObject;
    let type: string;
    try {
      body = applyChange(object.body, change.operations, {
        isRoot: (subject) => isRootOf(object.id, subject),
        localIdOf: (uri) => uris.localIdOf(uri),
      });
      type = checkLogisticsObject(absolute(body));
      checkOntology(body);
    } catch (error) {
      // Whatever goes wrong applying an accepted change fails the request: it never stays pending.
      if (error instanceof ChangeNotApplicable || error instanceof AppError)
        return fail(row, decidedBy, `The change does not apply: ${error.message}`, 422, ref);
      return fail(row, decidedBy, "The change could not be applied", 500, ref);
    }
    const accepted = await store
      .transaction(async (tx) => {
        const decidedRow = await store.decide({ id: row.id, status: "REQUEST_ACCEPTED", decidedBy }, tx);
        if (!decidedRow) throw decided(row);
        const written = await store.writeRevision(
          { id: object.id, revision: row.revision, type, types: typesOf(body), body },
          row.id,
          tx,
        );
        if (!written) throw new RevisionMovedOn();
        const superseded = await store.supersede(
          {
            objectId: object.id,
            revision: row.revision,
            acceptedId: row.id,
            decidedBy,
            reason: `Revision ${row.revision} was changed by ${uris.actionRequestUri(row.id)}`,
          },
          tx,
        );
        const changed = {
          id: object.id,
          type,
          types: typesOf(body),
          body,
          awb: object.awb,
          createdBy: object.created_by,
        };
        await notifications.objectUpdated(tx, { ...changed, revision: written.revision }, object.body);
        const now = { id: object.id, type };
        for (const request of [decidedRow, ...superseded]) await notifications.changeRequestStatus(tx, request, now);
        return decidedRow;
      })
      .catch((error: unknown) => {
        if (error instanceof RevisionMovedOn || error instanceof AppError) return error;
        return new ApplyFailed();
      });
    if (accepted instanceof RevisionMovedOn)
      return fail(row, decidedBy, outdated(row.revision, row.revision + 1), 409, ref);
    if (accepted instanceof ApplyFailed) return fail(row, decidedBy, "The change could not be applied", 500, ref);
    if (accepted instanceof AppError) throw accepted;
    return accepted;
  }

  /**
   * A change whose result the cargo ontology does not allow (a second goodsDescription, a slac of
   * "many") is refused (400) before the request is stored. One that does not apply at all is left to
   * the decision, which fails it with the reason.
   */
  function refuseOutsideOntology(body: NodeObject, id: string, change: Change): void {
    let changed: NodeObject;
    try {
      changed = applyChange(body, change.operations, {
        isRoot: (subject) => isRootOf(id, subject),
        localIdOf: (uri) => uris.localIdOf(uri),
      });
    } catch {
      return;
    }
    checkOntology(changed);
  }

  function isRootOf(id: string, subject: string): boolean {
    return subject === id || uris.localIdOf(subject) === id;
  }

  async function fail(
    row: ActionRequestRow,
    decidedBy: string,
    reason: string,
    errorStatus: number,
    object: { id: string; type: string },
  ) {
    const failed = await decideNotified(
      { id: row.id, status: "REQUEST_FAILED" satisfies ActionRequestStatus, decidedBy, reason, errorStatus },
      object,
    );
    return failed ?? row;
  }

  /** A pending request's decision and, in the same transaction, its requester's status notification. */
  function decideNotified(
    decision: Parameters<ObjectStore["decide"]>[0],
    object: { id: string; type: string },
  ): Promise<ActionRequestRow | undefined> {
    return store.transaction(async (tx) => {
      const row = await store.decide(decision, tx);
      if (row) await notifications.changeRequestStatus(tx, row, object);
      return row;
    });
  }
}

class RevisionMovedOn extends Error {}
class ApplyFailed extends Error {}

function outdated(asked: number, latest: number): string {
  return `The change applies to revision ${asked}; the logistics object is at revision ${latest}`;
}

function decided(row: ActionRequestRow): AppError {
  return new AppError("ACTION_REQUEST_DECIDED", `The action request is ${row.status}, no longer pending`);
}

function isReservedId(id: string): boolean {
  return awbObjectKindOf(id) !== undefined || /^(awb|location|organization|transport-movement)-/.test(id);
}

export type ObjectService = ReturnType<typeof createObjectService>;
