import { param, sql, statement } from "../../db/sql-statement";
import {
  LOGISTICS_EVENT_COLUMNS,
  LOGISTICS_EVENT_ROWS,
  type LogisticsEventRow,
  type LogisticsEventRowsParams,
} from "./logistics-event-rows";

/** The sort asked for, then the other date, then the id: pages never overlap. */
const ORDER = sql`CASE WHEN ${param("sort")} = 'ASC-creationDate' THEN creation_date END ASC,
  CASE WHEN ${param("sort")} = 'DESC-creationDate' THEN creation_date END DESC,
  CASE WHEN ${param("sort")} = 'ASC-eventDate' THEN event_date END ASC,
  CASE WHEN ${param("sort")} = 'DESC-eventDate' THEN event_date END DESC,
  CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN event_date END ASC,
  CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN event_date END DESC,
  CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN creation_date END ASC,
  CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN creation_date END DESC,
  CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN id END ASC,
  CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN id END DESC`;

/**
 * One page of an object's logistics events, filtered and sorted, with how many match (`total`), and of
 * the whole list (filters aside) how many there are and when the last was stored: one row per event
 * of the page, or one row with the event's columns null when the page is empty. `codes`: texts one of
 * which the eventCode's IRI contains (the specification's event-code); bounds are strict; `sort` one of
 * ASC-creationDate, DESC-creationDate, ASC-eventDate, DESC-eventDate.
 */
export const logisticsEventsPage = statement<
  LogisticsEventRowsParams & {
    codes: string[] | null;
    createdAfter: string | null;
    createdBefore: string | null;
    occurredAfter: string | null;
    occurredBefore: string | null;
    sort: string;
    limit: number;
    skip: number;
  },
  Partial<LogisticsEventRow> & { total: number; all_count: number; last_modified: Date | null }
>(
  "onerecord/logistics-events-page",
  sql`WITH events AS (
        SELECT r.*,
               (${param("codes")}::text[] IS NULL
                OR EXISTS (SELECT 1 FROM unnest(${param("codes")}::text[]) AS f WHERE strpos(r.code_iri, f) > 0))
               AND (${param("createdAfter")}::timestamptz IS NULL OR r.creation_date > ${param("createdAfter")}::timestamptz)
               AND (${param("createdBefore")}::timestamptz IS NULL OR r.creation_date < ${param("createdBefore")}::timestamptz)
               AND (${param("occurredAfter")}::timestamptz IS NULL OR r.event_date > ${param("occurredAfter")}::timestamptz)
               AND (${param("occurredBefore")}::timestamptz IS NULL OR r.event_date < ${param("occurredBefore")}::timestamptz)
               AS matches
        FROM (${LOGISTICS_EVENT_ROWS}) r
      ),
      summary AS (
        SELECT count(*) FILTER (WHERE matches)::int AS total, count(*)::int AS all_count,
               max(creation_date) AS last_modified
        FROM events
      )
      SELECT summary.total, summary.all_count, summary.last_modified, page.*
      FROM summary
        LEFT JOIN LATERAL (
          SELECT ${LOGISTICS_EVENT_COLUMNS} FROM events WHERE matches
          ORDER BY ${ORDER}
          LIMIT ${param("limit")} OFFSET ${param("skip")}
        ) page ON true`,
);
