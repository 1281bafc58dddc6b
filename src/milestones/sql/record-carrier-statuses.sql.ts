import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, RECORD } from "./carrier-status-columns";

/** A status recorded now: its row's id (the event id of one that is no milestone), and what it was. */
export interface RecordedStatusRow {
  id: string;
  status_key: string;
  awb: string;
  code: string;
  mapped: boolean;
}

/**
 * Records the statuses (`records`: a JSON array of objects keyed by column) whose key is not
 * recorded yet, the first of repeats within the call, and answers those it recorded, in the order
 * given. Rows go in key order, so two transactions recording overlapping statuses wait for each
 * other in one order instead of deadlocking.
 */
export const recordCarrierStatuses = statement<{ records: string; receivedAt: string }, RecordedStatusRow>(
  "milestones/record-carrier-statuses",
  sql`WITH recorded AS (
        INSERT INTO carrier_status (id, received_at, ${COLUMNS})
        SELECT gen_random_uuid(), ${param("receivedAt")}::timestamptz, ${COLUMNS}
        FROM (SELECT DISTINCT ON (status_key) * FROM jsonb_to_recordset(${param("records")}::jsonb) AS r(${RECORD})
              ORDER BY status_key, ordinal) r
        ORDER BY status_key
        ON CONFLICT (status_key) DO NOTHING
        RETURNING id::text AS id, status_key, awb, code, mapped, ordinal
      )
      SELECT id, status_key, awb, code, mapped FROM recorded ORDER BY ordinal`,
);
