import type { SqlRunner } from "../../db/sql-statement";
import { readPartner } from "../sql/partner-read.sql";

/** What the path of an Organization's URI on a ONE Record server holds after that server's base URL. */
const OBJECTS = "/logistics-objects/";

/**
 * Where notifications for an Organization go (docs/ONE-RECORD.md "Subscriptions"): `{server}/notifications`,
 * the server being the partner server the operator registered for it (npm run admin -- partner:add) or,
 * for an OIDC agent whose Organization URI names an object of a ONE Record server
 * (`{server}/logistics-objects/{id}`), that server. Undefined when neither is known: an API client has
 * no URI of its own elsewhere, so it needs a registered partner server.
 */
export async function notificationEndpointOf(db: SqlRunner, organizationId: string): Promise<string | undefined> {
  const [partner] = await readPartner.rows(db, { organization: organizationId });
  if (partner) return `${partner.server_url}/notifications`;
  return serverOfOrganizationUri(organizationId)?.concat("/notifications");
}

/** "https://1r.forwarder.example/api/logistics-objects/org-7" → "https://1r.forwarder.example/api"; else undefined. */
export function serverOfOrganizationUri(uri: string): string | undefined {
  if (!/^https?:\/\//i.test(uri)) return undefined;
  const at = uri.indexOf(OBJECTS);
  if (at < 0) return undefined;
  let url: URL;
  try {
    url = new URL(uri.slice(0, at));
  } catch {
    return undefined;
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") return undefined;
  return url.href.replace(/\/+$/, "");
}
