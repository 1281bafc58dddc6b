import { param, sql, statement } from "../../db/sql-statement";

/**
 * Whether `endpoint` is that of a live subscription of an Organization on another server that the
 * holder accepted (accepted_at is set only by a holder's decision; a foreign Organization's id is
 * its URI, the only ids holding ":"): a server no operator registered that may still be sent
 * notifications, without a token.
 */
export const acceptedThirdPartyEndpoint = statement<{ endpoint: string }, { accepted: boolean }>(
  "onerecord/third-party-endpoint",
  sql`SELECT EXISTS (SELECT 1 FROM onerecord_subscription s
        WHERE s.endpoint = ${param("endpoint")} AND s.status = 'REQUEST_ACCEPTED' AND s.accepted_at IS NOT NULL
          AND s.disabled_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())
          AND position(':' in s.subscriber) > 0) AS accepted`,
);
