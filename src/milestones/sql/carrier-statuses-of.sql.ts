import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { COLUMNS_OF_C, type CarrierStatusColumn } from "./carrier-status-columns";

/** The most statuses an AWB's history answers with. */
export const MAX_CARRIER_STATUSES = 1_000;

/**
 * An AWB's recorded statuses in the order they happened (one without a time when it was received),
 * then in the order they were stored; the first MAX_CARRIER_STATUSES. The join keeps to the AWB and
 * to mapped statuses: a JSON caller's eventId of the same text links to nothing here.
 */
export const carrierStatusesOf = statement<
  { awb: string },
  Record<CarrierStatusColumn | "id" | "received_at" | "milestone_id", unknown>
>(
  "milestones/carrier-statuses-of",
  sql`SELECT c.id::text AS id, c.received_at, e.id::text AS milestone_id, ${COLUMNS_OF_C}
      FROM carrier_status c
        LEFT JOIN status_event e ON c.mapped AND e.dedupe_key = 'id:' || c.status_key AND e.awb = c.awb
      WHERE c.awb = ${param("awb")}
      ORDER BY coalesce(c.occurred_at, c.received_at), c.received_at, c.ordinal, c.id
      LIMIT ${sqlText(String(MAX_CARRIER_STATUSES))}`,
);
