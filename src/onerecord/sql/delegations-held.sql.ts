import { param, sql, statement } from "../../db/sql-statement";

/**
 * How many logistics objects the access delegations `requestedBy` has stored name, each delegation
 * counting its own (the requested_by index): accepted, revoked or failed ones alike until retention
 * deletes them, rejected ones left out (they have their own daily bound).
 */
export const delegatedObjectsHeld = statement<{ requestedBy: string }, { objects: number }>(
  "onerecord/delegations-held",
  sql`SELECT coalesce(sum(cardinality(objects)), 0)::int AS objects FROM onerecord_access_delegation
      WHERE requested_by = ${param("requestedBy")} AND status <> 'REQUEST_REJECTED'`,
);
