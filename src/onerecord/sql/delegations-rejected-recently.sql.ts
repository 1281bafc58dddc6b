import { param, sql, statement } from "../../db/sql-statement";

/** How many access delegations of `requestedBy` were rejected in the last 24 hours (the requested_by index). */
export const delegationsRejectedRecently = statement<{ requestedBy: string }, { n: number }>(
  "onerecord/delegations-rejected-recently",
  sql`SELECT count(*)::int AS n FROM onerecord_access_delegation
      WHERE requested_by = ${param("requestedBy")} AND status = 'REQUEST_REJECTED'
        AND requested_at > now() - interval '24 hours'`,
);
