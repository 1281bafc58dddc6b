import { param, sql, statement } from "../../db/sql-statement";

/**
 * Stores an event posted through ONE Record, unless the object has one with this id already (the same
 * POST again: its id is derived from its content, events.service.ts); answers the row when stored.
 */
export const insertLogisticsEvent = statement<
  {
    objectId: string;
    id: string;
    eventCode: string | null;
    eventDate: string;
    creationDate: string;
    body: string;
    createdBy: string;
  },
  { id: string }
>(
  "onerecord/logistics-event-insert",
  sql`INSERT INTO logistics_event (object_id, id, event_code, event_date, creation_date, body, created_by)
      VALUES (${param("objectId")}, ${param("id")}::uuid, ${param("eventCode")}, ${param("eventDate")}::timestamptz,
              ${param("creationDate")}::timestamptz, ${param("body")}::jsonb, ${param("createdBy")})
      ON CONFLICT (object_id, id) DO NOTHING
      RETURNING id::text AS id`,
);
