import { param, sql, statement } from "../../db/sql-statement";
import {
  LOGISTICS_EVENT_COLUMNS,
  LOGISTICS_EVENT_ROWS,
  type LogisticsEventRow,
  type LogisticsEventRowsParams,
} from "./logistics-event-rows";

/** One of an object's logistics events by its id (a milestone's, a carrier status's, a posted event's); no row when it has none. */
export const logisticsEventById = statement<LogisticsEventRowsParams & { eventId: string }, LogisticsEventRow>(
  "onerecord/logistics-event-by-id",
  sql`SELECT ${LOGISTICS_EVENT_COLUMNS} FROM (${LOGISTICS_EVENT_ROWS}) events WHERE id = ${param("eventId")}`,
);
