import type { SqlRunner } from "../../db/sql-statement";
import { readPartner } from "../sql/partner-read.sql";

/**
 * Where notifications for an Organization go (docs/ONE-RECORD.md "Subscriptions"): `{server}/notifications`,
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
