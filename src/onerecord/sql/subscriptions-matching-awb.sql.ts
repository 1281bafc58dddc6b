import { sql, statement } from "../../db/sql-statement";
import { AWB_MATCHES, type MatchingAwbRow } from "./subscription-matching-columns";

/**
 * The subscriptions to AWBs' objects that take one of `eventTypes` and whose subscriber may read them
 * (AWB_MATCHES), for what is written outside ingestion (an AWB's objects read or posted first, changed,
 * given an event).
 */
export const subscriptionsMatchingAwb = statement<
  { objectIds: string[]; classes: string[]; eventTypes: string[] },
  MatchingAwbRow
>("onerecord/subscriptions-matching-awb", sql`${AWB_MATCHES} ORDER BY id`);
