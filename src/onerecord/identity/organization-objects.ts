import { CARGO } from "../jsonld-context";
import { isSubclassOf } from "../objects/object-model";
import type { ObjectMeta } from "./access-policy";
import { CARRIER_ORGANIZATION_ID } from "./organizations";

/**
 * Whether a logistics object of this server is an Organization a company may act as (whoever
 * authenticates with a token whose logistics_agent_uri is its URI, or an API client linked to it):
 * cargo:Organization or a subclass, and not the carrier's reference data.
 */
export function isOrganizationObject(meta: ObjectMeta | undefined): boolean {
  return (
    meta !== undefined &&
    meta.id !== CARRIER_ORGANIZATION_ID &&
    meta.createdBy !== CARRIER_ORGANIZATION_ID &&
    isSubclassOf(meta.type, `${CARGO}Organization`)
  );
}
