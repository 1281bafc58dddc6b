import { param, sql, statement } from "../../db/sql-statement";

/**
 * Grants an Organization read access to a logistics object when `grantedBy` created it: the creator's
 * own grant, which never expires and belongs to no delegation; `mayPassOn` says whether the grantee may
 * delegate it further. It takes the place of a grant an access delegation made (the creator's word
 * outlasts the delegation); again with the same `mayPassOn`: no change. Answers the object's creator, or
 * no row when there is no such object: the caller tells "granted" (creator = grantedBy) from "not the
 * creator".
 */
export const grantRead = statement<
  { objectId: string; organizationId: string; grantedBy: string; mayPassOn: boolean },
  { created_by: string }
>(
  "onerecord/grant-read",
  sql`WITH target AS (SELECT id, created_by FROM logistics_object WHERE id = ${param("objectId")}),
      granted AS (
        INSERT INTO logistics_object_grant (object_id, organization_id, granted_by, may_pass_on)
        SELECT id, ${param("organizationId")}, ${param("grantedBy")}, ${param("mayPassOn")} FROM target
        WHERE created_by = ${param("grantedBy")}
        ON CONFLICT (object_id, organization_id) DO UPDATE
          SET granted_by = excluded.granted_by, granted_at = now(), delegation_id = NULL, expires_at = NULL,
              may_pass_on = excluded.may_pass_on, granted_with_key = NULL
          WHERE logistics_object_grant.delegation_id IS NOT NULL OR logistics_object_grant.expires_at IS NOT NULL
             OR logistics_object_grant.may_pass_on <> excluded.may_pass_on
             OR logistics_object_grant.granted_with_key IS NOT NULL
      )
      SELECT created_by FROM target`,
);
