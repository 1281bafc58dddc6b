import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, RECORD } from "./carrier-status-columns";

/**
 * Records the statuses (`records`: a JSON array of objects keyed by column) whose key is not
 * recorded yet, the first of repeats within the call. Rows go in key order, so two transactions
 * recording overlapping statuses wait for each other in one order instead of deadlocking.
 */
export const recordCarrierStatuses = statement<{ records: string; receivedAt: string }>(
  "milestones/record-carrier-statuses",
  sql`INSERT INTO carrier_status (id, received_at, ${COLUMNS})
      SELECT gen_random_uuid(), ${param("receivedAt")}::timestamptz, ${COLUMNS}
      FROM (SELECT DISTINCT ON (status_key) * FROM jsonb_to_recordset(${param("records")}::jsonb) AS r(${RECORD})
            ORDER BY status_key, ordinal) r
      ORDER BY status_key
      ON CONFLICT (status_key) DO NOTHING`,
);
