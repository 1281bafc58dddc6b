import { AppError, type FieldError } from "../../errors";
import { API, XSD } from "../jsonld-context";
import { isNode, type JsonLdValue, type NodeObject, typesOf, valuesOf } from "../jsonld-tree";
import { MAX_DESCRIPTION_CHARACTERS } from "../subscriptions/subscription";
import type { OneRecordUris } from "../uris";

/** The api:Permission members (the specification's Permission enumeration). */
export const PERMISSIONS = [
  "GET_LOGISTICS_OBJECT",
  "GET_LOGISTICS_EVENT",
  "PATCH_LOGISTICS_OBJECT",
  "POST_LOGISTICS_EVENT",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * At most this many logistics objects in one delegation: each is looked up, locked and granted, about
 * 2 ms of CPU each on the embedded database, so one request stays well within 100 ms.
 */
export const MAX_DELEGATED_OBJECTS = 20;

/**
 * This server's extension of api:AccessDelegation (the API ontology has no such property; servers may
 * take more properties than it names): an xsd:boolean, default false, saying that the delegate may pass
 * the access on, delegating it further. Only the objects' holder may say true (docs/ONE-RECORD.md
 * "Passing access on").
 */
export const MAY_BE_PASSED_ON = "urn:cargo-gateway:onerecord:mayBePassedOn";

/** An api:AccessDelegation as this server takes it. */
export interface AccessDelegation {
  /** The logistics objects' local ids, each once, in the order given. */
  readonly objects: readonly string[];
  /**
   * The delegate: its Organization id (organizations.ts) — a client's local id, or another server's
   * Organization URI as an OIDC agent names itself.
   */
  readonly organization: string;
  readonly permissions: readonly Permission[];
  readonly expiresAt: Date | undefined;
  readonly notifyRequestStatusChange: boolean;
  readonly description: string | undefined;
  /** MAY_BE_PASSED_ON: the delegate may delegate the access further. */
  readonly mayBePassedOn: boolean;
}

const term = (name: string) => `${API}${name}`;
const ACCESS_DELEGATION = term("AccessDelegation");
const HAS_LOGISTICS_OBJECT = term("hasLogisticsObject");
export const IS_REQUESTED_FOR = term("isRequestedFor");
const HAS_PERMISSION = term("hasPermission");
const EXPIRES_AT = term("expiresAt");
const NOTIFY = term("notifyRequestStatusChange");
const HAS_DESCRIPTION = term("hasDescription");
const PROPERTIES = new Set([
  HAS_LOGISTICS_OBJECT,
  IS_REQUESTED_FOR,
  HAS_PERMISSION,
  EXPIRES_AT,
  NOTIFY,
  HAS_DESCRIPTION,
  MAY_BE_PASSED_ON,
]);

/** xsd:dateTime with a time zone: an instant, which an expiry must be. */
const INSTANT =
  /^-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads an api:AccessDelegation (expanded). A body that is not one, or one this server cannot act on,
 * is refused (400) naming each property at fault, before anything is stored:
 * - `hasLogisticsObject`: 1 to MAX_DELEGATED_OBJECTS links to logistics objects of this server;
 * - `isRequestedFor`: exactly one Organization (the API ontology 2.3.0 allows at most one; the
 *   specification's class diagram shows a list: one request per delegate), a client's Organization on
 *   this server or an absolute http(s) URI of another's — never the carrier's or another object;
 * - `hasPermission`: 1 or more members of api:Permission;
 * - `expiresAt`: at most one xsd:dateTime with a time zone, after `now`;
 * - `notifyRequestStatusChange`: at most one xsd:boolean (default false); `hasDescription` at most one string
 *   of at most MAX_DESCRIPTION_CHARACTERS; MAY_BE_PASSED_ON at most one xsd:boolean (default false);
 * - no other property.
 */
export function readAccessDelegation(
  root: NodeObject,
  uris: Pick<OneRecordUris, "localIdOf">,
  now: Date,
): AccessDelegation {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  if (!typesOf(root).includes(ACCESS_DELEGATION))
    problem(ACCESS_DELEGATION, "the body must be an api:AccessDelegation");
  for (const key of Object.keys(root))
    if (!key.startsWith("@") && !PROPERTIES.has(key)) problem(key, "is not a property of an api:AccessDelegation");

  const objects: string[] = [];
  const objectValues = valuesOf(root, HAS_LOGISTICS_OBJECT);
  if (objectValues.length === 0) problem(HAS_LOGISTICS_OBJECT, "names at least one logistics object");
  if (objectValues.length > MAX_DELEGATED_OBJECTS)
    problem(HAS_LOGISTICS_OBJECT, `names at most ${MAX_DELEGATED_OBJECTS} logistics objects; send several delegations`);
  else
    for (const value of objectValues) {
      const id = linkOf(value);
      const local = id === undefined ? undefined : uris.localIdOf(id);
      if (local === undefined)
        problem(HAS_LOGISTICS_OBJECT, `${shown(value)} is not a link to a logistics object of this server`);
      else if (!objects.includes(local)) objects.push(local);
    }

  let organization = "";
  const delegates = valuesOf(root, IS_REQUESTED_FOR);
  if (delegates.length !== 1)
    problem(
      IS_REQUESTED_FOR,
      "names exactly one Organization (the API ontology allows one per delegation: send one per delegate)",
    );
  else {
    const uri = linkOf(delegates[0]!);
    const local = uri === undefined ? undefined : uris.localIdOf(uri);
    if (uri === undefined || !/^https?:\/\/[^\s/]+/i.test(uri))
      problem(IS_REQUESTED_FOR, `${shown(delegates[0])} is not a link to an Organization (an absolute http(s) URI)`);
    // One of this server's objects is checked to be an Organization by the service (it takes a lookup).
    else organization = local ?? uri;
  }

  const permissions: Permission[] = [];
  const permissionValues = valuesOf(root, HAS_PERMISSION);
  if (permissionValues.length === 0) problem(HAS_PERMISSION, "names at least one api:Permission");
  for (const value of permissionValues) {
    const id = linkOf(value);
    const name = id?.startsWith(API) ? id.slice(API.length) : undefined;
    if (!PERMISSIONS.includes(name as Permission))
      problem(HAS_PERMISSION, `${shown(value)} is not one of ${PERMISSIONS.map((p) => `api:${p}`).join(", ")}`);
    else if (!permissions.includes(name as Permission)) permissions.push(name as Permission);
  }

  let expiresAt: Date | undefined;
  const expiries = valuesOf(root, EXPIRES_AT);
  if (expiries.length > 1) problem(EXPIRES_AT, "at most one");
  else if (expiries.length === 1) {
    const [value] = expiries as [JsonLdValue];
    const text = value["@value"];
    const type = value["@type"];
    if (typeof text !== "string" || (type !== undefined && type !== `${XSD}dateTime`) || !INSTANT.test(text))
      problem(
        EXPIRES_AT,
        `must be an xsd:dateTime with a time zone, such as "2026-12-31T23:59:59Z", got ${shown(value)}`,
      );
    else if (new Date(text).getTime() <= now.getTime()) problem(EXPIRES_AT, `${text} has passed`);
    else expiresAt = new Date(text);
  }

  const flagOf = (property: string): boolean => {
    const values = valuesOf(root, property);
    if (values.length > 1) problem(property, "at most one");
    if (values.length !== 1) return false;
    const flag = booleanOf(values[0]!);
    if (flag === undefined) problem(property, `must be an xsd:boolean, got ${shown(values[0])}`);
    return flag ?? false;
  };
  const notify = flagOf(NOTIFY);
  const mayBePassedOn = flagOf(MAY_BE_PASSED_ON);

  const descriptions = valuesOf(root, HAS_DESCRIPTION);
  const description = descriptions[0]?.["@value"];
  if (descriptions.length > 1) problem(HAS_DESCRIPTION, "at most one");
  else if (descriptions.length === 1 && typeof description !== "string") problem(HAS_DESCRIPTION, "must be a string");
  else if (typeof description === "string" && [...description].length > MAX_DESCRIPTION_CHARACTERS)
    problem(HAS_DESCRIPTION, `at most ${MAX_DESCRIPTION_CHARACTERS} characters`);

  if (problems.length > 0)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  return {
    objects,
    organization,
    permissions,
    expiresAt,
    notifyRequestStatusChange: notify,
    description: typeof description === "string" ? description : undefined,
    mayBePassedOn,
  };
}

/** A link's IRI: a bare reference, or a node saying no more than its @id and @type (a typed link). */
function linkOf(value: JsonLdValue): string | undefined {
  if (!isNode(value) || typeof value["@id"] !== "string") return undefined;
  return Object.keys(value).every((key) => key === "@id" || key === "@type") ? value["@id"] : undefined;
}

function booleanOf(value: JsonLdValue): boolean | undefined {
  const text = value["@value"];
  const type = value["@type"];
  if (typeof text === "boolean" && type === undefined) return text;
  if (typeof text === "string" && type === `${XSD}boolean`)
    return text === "true" || text === "1" ? true : text === "false" || text === "0" ? false : undefined;
  return undefined;
}

function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
