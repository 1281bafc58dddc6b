import type { SqlRunner } from "../../db/sql-statement";
import { insertLogisticsEvent } from "../sql/logistics-event-insert.sql";
import type { LogisticsEventRow, LogisticsEventRowsParams } from "../sql/logistics-event-rows";
import { logisticsEventById } from "../sql/logistics-event-by-id.sql";
import { logisticsEventsPage } from "../sql/logistics-events-page.sql";
import { spendDailyQuota } from "../quota/daily-quota";
import type { EventListQuery } from "./event-query";
import { STATUS_CODE_LABELS, STATUS_CODE_PREFIX } from "./status-codes";

export type { LogisticsEventRow } from "../sql/logistics-event-rows";

/** Whose events: an object, and its AWB when it is an AWB's Shipment (its milestones are its events). */
export interface EventOwner {
  readonly objectId: string;
  readonly awb: string | null;
}

export interface EventPage {
  /** The page's events, in the order asked. */
  readonly rows: LogisticsEventRow[];
  /** How many events match the filters, paging aside. */
  readonly total: number;
  /** How many events the object has, and when the last was stored (null: none). */
  readonly allCount: number;
  readonly lastModified: Date | null;
}

/** A posted event as logistics_event stores it. */
export interface NewLogisticsEvent {
  readonly objectId: string;
  readonly id: string;
  readonly eventCode: string | null;
  readonly eventDate: Date;
  readonly creationDate: Date;
  /** Compacted, without @context, @id, eventFor or creationDate (the row gives those). */
  readonly body: Record<string, unknown>;
  readonly createdBy: string;
}

const STATUS_CODES = [...STATUS_CODE_LABELS];

function ownerParams(owner: EventOwner): LogisticsEventRowsParams {
  return { objectId: owner.objectId, awb: owner.awb, statusCodePrefix: STATUS_CODE_PREFIX, statusCodes: STATUS_CODES };
}

/** The logistics events' statements (src/onerecord/sql/logistics-event*), on the raw driver or in a transaction. */
export function createEventStore(sql: SqlRunner) {
  return {
    /** Spends one of `quota` and `bytes` for `subject`; false when the quota is spent (nothing changed). */
    spendQuota: (quota: { name: string; perDay: number; bytesPerDay: number }, subject: string, bytes: number) =>
      spendDailyQuota(sql, quota, subject, bytes),

    async page(owner: EventOwner, query: EventListQuery): Promise<EventPage> {
      const rows = await logisticsEventsPage.rows(sql, {
        ...ownerParams(owner),
        codes: query.codes === null ? null : [...query.codes],
        createdAfter: query.createdAfter?.toISOString() ?? null,
        createdBefore: query.createdBefore?.toISOString() ?? null,
        occurredAfter: query.occurredAfter?.toISOString() ?? null,
        occurredBefore: query.occurredBefore?.toISOString() ?? null,
        sort: query.sort,
        limit: query.limit,
        skip: query.skip,
      });
      const first = rows[0]!;
      return {
        rows: rows.filter((row) => row.id != null) as LogisticsEventRow[],
        total: Number(first.total),
        allCount: Number(first.all_count),
        lastModified: first.last_modified === null ? null : new Date(first.last_modified),
      };
    },

    async byId(owner: EventOwner, eventId: string): Promise<LogisticsEventRow | undefined> {
      const [row] = await logisticsEventById.rows(sql, { ...ownerParams(owner), eventId });
      return row;
    },

    /** Whether the event was stored now (false: the object has one with this id already). */
    insert: (event: NewLogisticsEvent, on: SqlRunner = sql) => insertEvent(on, event),
  };
}

export async function insertEvent(on: SqlRunner, event: NewLogisticsEvent): Promise<boolean> {
  const rows = await insertLogisticsEvent.rows(on, {
    objectId: event.objectId,
    id: event.id,
    eventCode: event.eventCode,
    eventDate: event.eventDate.toISOString(),
    creationDate: event.creationDate.toISOString(),
    body: JSON.stringify(event.body),
    createdBy: event.createdBy,
  });
  return rows.length > 0;
}

export type EventStore = ReturnType<typeof createEventStore>;
