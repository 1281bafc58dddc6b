import { param, sql, statement } from "../../db/sql-statement";

/**
 * A logistics object's next state, written only if it is still at `revision` (compare and set: two
 * changes to one revision, from any instances, cannot both apply), with its revision row. No row when
 * the object moved on.
 */
export const writeObjectRevision = statement<
  { id: string; revision: number; type: string; types: string[]; body: string; actionRequestId: string | null },
  { revision: number; last_modified: Date }
>(
  "onerecord/object-write-revision",
  sql`WITH updated AS (
        UPDATE logistics_object
        SET body = ${param("body")}::jsonb, type = ${param("type")}, types = ${param("types")}::text[],
            revision = revision + 1, last_modified = now()
        WHERE id = ${param("id")} AND revision = ${param("revision")}::int
        RETURNING id, revision, body, types, last_modified
      ), written AS (
        INSERT INTO logistics_object_revision (object_id, revision, body, types, modified_at, action_request_id)
        SELECT id, revision, body, types, last_modified, ${param("actionRequestId")}::uuid FROM updated
      )
      SELECT revision, last_modified FROM updated`,
);
