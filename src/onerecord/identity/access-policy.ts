import type { OneRecordCaller } from "./caller";
import { CARRIER_ORGANIZATION_ID, isClientOrganizationId } from "./organizations";

/**
 * Who may do what with a logistics object (docs/ONE-RECORD.md "Identity and access"). Default deny:
 * each rule below grants something, nothing else is allowed.
 */

/** What the rules need to know of an object. */
export interface ObjectMeta {
  /** Its local id ("waybill-020-12345675", "location-FRA", a UUID). */
  readonly id: string;
  /** Its most specific class (IRI). */
  readonly type: string;
  /** The AWB ("020-12345675") when the object is an AWB's Waybill or Shipment. */
  readonly awb?: string | null | undefined;
  /** The creator's Organization id (organizations.ts). */
  readonly createdBy: string;
  /**
   * Organizations with an active grant to read it (readers-of.sql.ts: the creator's grants and access
   * delegations' grants, those that ended left out). Read for one caller (object-read-as.sql.ts), it
   * names that caller or nobody: what the rules below ask of it, whatever the number of grants.
   */
  readonly readers?: readonly string[] | undefined;
  /**
   * Those readers whose grant an access delegation made: they read it and may ask for changes, but post
   * no events (this server delegates reading only).
   */
  readonly delegates?: readonly string[] | undefined;
}

const LOCATION = "https://onerecord.iata.org/ns/cargo#Location";

/**
 * The carrier's stations, its own Organization and its clients' Organizations (served from its records):
 * public to every authenticated caller, written by none.
 */
function isCarrierReferenceData(object: ObjectMeta): boolean {
  return (
    object.id === CARRIER_ORGANIZATION_ID ||
    isClientOrganizationId(object.id) ||
    (object.type === LOCATION && object.createdBy === CARRIER_ORGANIZATION_ID)
  );
}

function isAwbObject(object: ObjectMeta): boolean {
  return object.awb !== undefined && object.awb !== null;
}

function isCreatorOrReader(caller: OneRecordCaller, object: ObjectMeta): boolean {
  return object.createdBy === caller.organizationId || (object.readers ?? []).includes(caller.organizationId);
}

/**
 * Reading an object, its revisions, audit trail and events. An AWB's Waybill and Shipment take
 * events:read, as the AWB's legacy history does (or objects:write: the carrier's systems keep them),
 * or a grant naming the caller's Organization (an access delegation): a delegate reads them whatever
 * its scopes.
 */
export function canRead(caller: OneRecordCaller, object: ObjectMeta): boolean {
  if (isCarrierReferenceData(object)) return true;
  if (isAwbObject(object) && (caller.scopes.has("events:read") || caller.scopes.has("objects:write"))) return true;
  return isCreatorOrReader(caller, object);
}

/**
 * Changing an object at once (a change request accepted on arrival, or deciding a pending one).
 * objects:write is given to the carrier's own systems: any of them keeps the AWB's objects, each
 * the objects it created. A grant gives reading, never writing: a reader's change stays pending.
 */
export function canWrite(caller: OneRecordCaller, object: ObjectMeta): boolean {
  if (!caller.scopes.has("objects:write") || isCarrierReferenceData(object)) return false;
  return isAwbObject(object) || object.createdBy === caller.organizationId;
}

/**
 * Adding a logistics event. On an AWB's objects events:write is enough, as for the legacy
 * ingestion; on others the caller must also be able to read the object, by more than a delegate's
 * grant. Stations and the carrier's Organization take no events from clients.
 */
export function canPostEvent(caller: OneRecordCaller, object: ObjectMeta): boolean {
  if (!caller.scopes.has("events:write") || isCarrierReferenceData(object)) return false;
  if (isAwbObject(object)) return true;
  return isCreatorOrReader(caller, object) && !(object.delegates ?? []).includes(caller.organizationId);
}

/** Creating logistics objects. */
export function canCreate(caller: OneRecordCaller): boolean {
  return caller.scopes.has("objects:write");
}

/**
 * On what access the caller would pass reading an object on (an access delegation), as the holder's
 * policy tells them apart (docs/ONE-RECORD.md "Passing access on"):
 * - "holder": it created the object; it may also let its delegates pass the access on;
 * - "scope": its scopes open an AWB's objects (the carrier's policy lets such a reader delegate), so
 *   what it grants ends with that access: the API key, or the token, that carried the scope;
 * - "passable grant": it holds a grant the holder let it pass on;
 * - "grant": it holds a grant it may not pass on (the default);
 * - undefined: it may not read the object.
 * `mayPassOn` is whether its own active grant, if any, may be passed on.
 */
export function delegationGround(
  caller: OneRecordCaller,
  object: ObjectMeta,
  mayPassOn: boolean | null,
): "holder" | "scope" | "passable grant" | "grant" | undefined {
  if (isCarrierReferenceData(object)) return undefined;
  if (object.createdBy === caller.organizationId) return "holder";
  if (isAwbObject(object) && (caller.scopes.has("events:read") || caller.scopes.has("objects:write"))) return "scope";
  if (mayPassOn === null) return undefined;
  return mayPassOn ? "passable grant" : "grant";
}

/** Granting another Organization read access: the creator only. */
export function canGrant(caller: OneRecordCaller, object: ObjectMeta): boolean {
  return object.createdBy === caller.organizationId && !isCarrierReferenceData(object);
}
