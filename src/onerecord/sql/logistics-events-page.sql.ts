import { param, sql, statement } from "../../db/sql-statement";
import {
  LOGISTICS_EVENT_COLUMNS,
  LOGISTICS_EVENT_ROWS,
  type LogisticsEventRow,
  type LogisticsEventRowsParams,
} from "./logistics-event-rows";

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
  sql`WITH events AS (${LOGISTICS_EVENT_ROWS}),
      matched AS (
        SELECT * FROM events
        WHERE (${param("codes")}::text[] IS NULL
               OR EXISTS (SELECT 1 FROM unnest(${param("codes")}::text[]) AS f WHERE strpos(code_iri, f) > 0))
          AND (${param("createdAfter")}::timestamptz IS NULL OR creation_date > ${param("createdAfter")}::timestamptz)
          AND (${param("createdBefore")}::timestamptz IS NULL OR creation_date < ${param("createdBefore")}::timestamptz)
          AND (${param("occurredAfter")}::timestamptz IS NULL OR event_date > ${param("occurredAfter")}::timestamptz)
          AND (${param("occurredBefore")}::timestamptz IS NULL OR event_date < ${param("occurredBefore")}::timestamptz)
      ),
      whole AS (SELECT count(*)::int AS all_count, max(creation_date) AS last_modified FROM events),
      counted AS (SELECT count(*)::int AS total FROM matched)
      SELECT counted.total, whole.all_count, whole.last_modified, page.*
      FROM counted CROSS JOIN whole
        LEFT JOIN LATERAL (
          SELECT ${LOGISTICS_EVENT_COLUMNS} FROM matched
          ORDER BY CASE WHEN ${param("sort")} = 'ASC-creationDate' THEN creation_date END ASC,
                   CASE WHEN ${param("sort")} = 'DESC-creationDate' THEN creation_date END DESC,
                   CASE WHEN ${param("sort")} = 'ASC-eventDate' THEN event_date END ASC,
                   CASE WHEN ${param("sort")} = 'DESC-eventDate' THEN event_date END DESC,
                   CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN event_date END ASC,
                   CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN event_date END DESC,
                   CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN creation_date END ASC,
                   CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN creation_date END DESC,
                   CASE WHEN ${param("sort")} LIKE 'ASC-%' THEN id END ASC,
                   CASE WHEN ${param("sort")} LIKE 'DESC-%' THEN id END DESC
          LIMIT ${param("limit")} OFFSET ${param("skip")}
        ) page ON true`,
);
