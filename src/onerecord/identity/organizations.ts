/**
 * The Organizations a ONE Record caller acts for, by local id (the last segment of its URI on this
 * server, as logistics_object.created_by and action_request.requested_by hold them).
 */

/** The carrier's own Organization: the data holder, creator of the AWB's objects and the stations. */
export const CARRIER_ORGANIZATION_ID = "organization-carrier";

const CLIENT_ORGANIZATION_PREFIX = "organization-";

/** An API client's Organization: one per client, whichever of its keys calls. */
export function clientOrganizationId(clientId: string): string {
  return `${CLIENT_ORGANIZATION_PREFIX}${clientId}`;
}

/** Whether a local id is an API client's Organization ("organization-<client uuid>"). */
export function isClientOrganizationId(id: string): boolean {
  return CLIENT_ORGANIZATION_ID.test(id);
}

const CLIENT_ORGANIZATION_ID = /^organization-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The client whose Organization a local id names; undefined for any other id. */
export function clientIdOfOrganizationId(id: string): string | undefined {
  return isClientOrganizationId(id) ? id.slice(CLIENT_ORGANIZATION_PREFIX.length) : undefined;
}

/**
 * An OIDC agent's Organization id: the local id when its `logistics_agent_uri` is an object of this
 * server (so a client calling with a key or as an agent is one Organization), else the URI itself,
 * which no local id can equal (local ids hold no ":").
 */
export function agentOrganizationId(agentUri: string, localIdOf: (uri: string) => string | undefined): string {
  return localIdOf(agentUri) ?? agentUri;
}

/** The URI of an Organization id as `agentOrganizationId` and `clientOrganizationId` make them. */
export function organizationUriOf(organizationId: string, objectUri: (id: string) => string): string {
  return isForeignOrganization(organizationId) ? organizationId : objectUri(organizationId);
}

/** Whether an Organization id is another server's Organization: its URI (local ids hold no ":"). */
export function isForeignOrganization(organizationId: string): boolean {
  return organizationId.includes(":");
}
