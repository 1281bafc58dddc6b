import { param, sql, statement } from "../../db/sql-statement";

/** Gives claimed deliveries back unattempted; one whose lease another claim holds now (another token) is left alone. */
export const releaseClaims = statement<{ ids: string[]; tokens: string[] }, { n: number }>(
  "delivery/release-claims",
  sql`WITH released AS (
       UPDATE delivery d SET lease_until = NULL, lease_token = NULL
       FROM unnest(${param("ids")}::uuid[], ${param("tokens")}::uuid[]) AS v(id, token)
       WHERE d.id = v.id AND d.lease_token = v.token
       RETURNING 1
     ) SELECT count(*)::int AS n FROM released`,
);
