import { param, sql, statement } from "../../db/sql-statement";

/**
 * The stored event each event (one element of the arrays each) repeats, by its dedupe key or its
 * legacy key with the same AWB and state; an event whose original is not stored has no row.
 */
export const originalsOf = statement<
  { dedupeKeys: string[]; legacyKeys: Array<string | null>; awbs: string[]; states: string[] },
  { k: string; id: string }
>(
  "milestones/originals-of",
  sql`SELECT v.k, coalesce(e.id, l.id)::text AS id
      FROM unnest(${param("dedupeKeys")}::text[], ${param("legacyKeys")}::text[], ${param("awbs")}::text[],
                  ${param("states")}::text[]) AS v(k, l, a, s)
        LEFT JOIN status_event e ON e.dedupe_key = v.k
        LEFT JOIN status_event l ON l.dedupe_key = v.l AND l.awb = v.a AND l.state = v.s
      WHERE e.id IS NOT NULL OR l.id IS NOT NULL`,
);
