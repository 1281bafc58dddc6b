import { sql, type SqlFragment } from "../../db/sql-statement";

/**
 * Common table expressions that withdraw grants along their trust chain (docs/ONE-RECORD.md "Access
 * delegations"): `chain` holds the grants `base` selects (object_id, organization_id) and, on the same
 * objects, every grant an access delegation made on the word of an Organization that loses its grant
 * here — transitively, so what a delegate passed on goes with its own access. An object's creator
 * never loses access, so what it passed on stays. `withdrawn` deletes them all, answering each grant
 * deleted with the delegation that made it (null: the operator's). For `WITH RECURSIVE`.
 */
export function withdrawnGrants<Name extends string>(base: SqlFragment<Name>): SqlFragment<Name> {
  return sql<Name>`chain(object_id, organization_id) AS (
        ${base}
        UNION
        SELECT g.object_id, g.organization_id FROM chain c
        JOIN logistics_object o ON o.id = c.object_id AND o.created_by <> c.organization_id
        JOIN logistics_object_grant g ON g.object_id = c.object_id AND g.granted_by = c.organization_id
          AND g.delegation_id IS NOT NULL
      ),
      withdrawn AS (
        DELETE FROM logistics_object_grant g USING chain c
        WHERE g.object_id = c.object_id AND g.organization_id = c.organization_id
        RETURNING g.object_id, g.organization_id, g.delegation_id::text AS delegation_id
      )`;
}
