import { HELD_CALLBACK_PREFIX } from "../../delivery/held-callback";
import type { SqlRunner } from "../../db/sql-statement";
import { readPartner } from "../sql/partner-read.sql";

/**
 * Where notifications for an Organization go (docs/ONE-RECORD.md "Partner servers"): `{server}/notifications`,
 * the server being the partner server the operator registered for it (npm run admin -- partner:add).
 * Undefined when none is registered: no Organization, an OIDC agent included, chooses where this
 * server sends requests and its access tokens (an agent's URI is not taken for its server's).
 */
export async function notificationEndpointOf(db: SqlRunner, organizationId: string): Promise<string | undefined> {
  const [partner] = await readPartner.rows(db, { organization: organizationId });
  return partner ? notificationsUrlOf(partner.server_url) : undefined;
}

/** A ONE Record server's Notifications endpoint, from its base URL (a trailing "/" or not). */
export function notificationsUrlOf(serverUrl: string): string {
  return `${serverUrl.replace(/\/+$/, "")}/notifications`;
}

/**
 * The Notifications endpoint of an Organization on another ONE Record server, derived from its IRI as
 * the specification says a publisher may: the server is what precedes `/logistics-objects/` in the
 * IRI, else the IRI's origin. Undefined for an IRI that is not http(s).
 */
export function derivedNotificationsUrlOf(organizationIri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(organizationIri);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const path = url.pathname;
  const at = path.indexOf("/logistics-objects/");
  return notificationsUrlOf(`${url.origin}${at < 0 ? "" : path.slice(0, at)}`);
}

/**
 * Where notifications to an Organization of this server that no operator said receives them are
 * kept: a held callback (delivery/held-callback.ts), parked until the operator registers the
 * Organization's server (partner-admin.ts moves them there).
 */
export function heldEndpointOf(organizationId: string): string {
  return `${HELD_CALLBACK_PREFIX}${encodeURIComponent(organizationId)}`;
}
