import type { Prisma } from "../db/database";
import type { CarrierStatusColumn } from "./sql/carrier-status-columns";
import { carrierStatusesOf as carrierStatusesOfSql } from "./sql/carrier-statuses-of.sql";
import { recordCarrierStatuses as recordCarrierStatusesSql } from "./sql/record-carrier-statuses.sql";

/**
 * A status recorded now (its key was new): `id` is its carrier_status row's, which is its event's id
 * under the AWB's Shipment when it is no milestone (`mapped` false).
 */
export interface RecordedStatus {
  readonly id: string;
  readonly awb: string;
  readonly code: string;
  readonly mapped: boolean;
}

export { MAX_CARRIER_STATUSES } from "./sql/carrier-statuses-of.sql";

/**
 * A status a carrier message reported, as the AWB's history records it (table carrier_status): every
 * status of an FSU or XFSU, a gateway milestone or not, with what the message said beyond the
 * milestone (pieces, weight, flight date, discrepancy…). The parsers' records become these rows in
 * ingestion/carrier-message.ts (`statusRowsOf`).
 */
export interface CarrierStatusRow {
  /** The content-derived event id ("fsu:…", "xfsu:…"); for a mapped status, its milestone's eventId. */
  statusKey: string;
  awb: string;
  code: string;
  mapped: boolean;
  /** Why it is not a milestone; null when mapped. */
  reason: string | null;
  format: "FSU" | "XFSU";
  sourceLine: number | null;
  sourceElement: string | null;
  sourceText: string;
  occurredAt: Date | null;
  timeBasis: string | null;
  station: string | null;
  flight: string | null;
  flightDate: string | null;
  carrierCode: string | null;
  discrepancy: string | null;
  toaTimestamp: Date | null;
  shipment: string | null;
  pieces: number | null;
  weight: number | null;
  weightUnit: string | null;
  totalPieces: number | null;
}

/** A recorded status, with when it was received and, for a mapped one, its stored milestone's id. */
export interface StoredCarrierStatus extends CarrierStatusRow {
  id: string;
  receivedAt: Date;
  /** The status_event stored for it (the milestone's eventId), or null for an unmapped status. */
  milestoneId: string | null;
}

type Tx = Pick<Prisma, "$queryRawUnsafe">;

/**
 * Records the statuses whose key is not recorded yet, in the caller's transaction; returns those it
 * recorded (a repeat of a message's statuses: none), in the order given. Rows go in key order, so two
 * transactions recording overlapping statuses wait for each other in one order instead of deadlocking.
 */
export async function recordCarrierStatuses(
  tx: Tx,
  rows: readonly CarrierStatusRow[],
  receivedAt: Date,
): Promise<RecordedStatus[]> {
  if (rows.length === 0) return [];
  // One jsonb parameter instead of an array per column: the rows' nulls and numbers survive as they are.
  const records = rows.map((r, ordinal): Record<CarrierStatusColumn, unknown> => ({
    status_key: r.statusKey,
    awb: r.awb,
    code: r.code,
    mapped: r.mapped,
    reason: r.reason,
    format: r.format,
    source_line: r.sourceLine,
    source_element: r.sourceElement,
    source_text: r.sourceText,
    occurred_at: r.occurredAt?.toISOString() ?? null,
    time_basis: r.timeBasis,
    station: r.station,
    flight: r.flight,
    flight_date: r.flightDate,
    carrier_code: r.carrierCode,
    discrepancy: r.discrepancy,
    toa_timestamp: r.toaTimestamp?.toISOString() ?? null,
    shipment: r.shipment,
    pieces: r.pieces,
    weight: r.weight,
    weight_unit: r.weightUnit,
    total_pieces: r.totalPieces,
    ordinal,
  }));
  const recorded = await recordCarrierStatusesSql.rows(tx, {
    records: JSON.stringify(records),
    receivedAt: receivedAt.toISOString(),
  });
  return recorded.map((r) => ({ id: r.id, awb: r.awb, code: r.code, mapped: r.mapped }));
}

/**
 * An AWB's recorded statuses in the order they happened, then in the order they were stored; the
 * first MAX_CARRIER_STATUSES.
 */
export async function carrierStatusesOf(prisma: Prisma, awb: string): Promise<StoredCarrierStatus[]> {
  const rows = await carrierStatusesOfSql.rows(prisma, { awb });
  return rows.map((r) => ({
    id: r.id as string,
    receivedAt: r.received_at as Date,
    milestoneId: (r.milestone_id as string | null) ?? null,
    statusKey: r.status_key as string,
    awb: r.awb as string,
    code: r.code as string,
    mapped: r.mapped as boolean,
    reason: r.reason as string | null,
    format: r.format as "FSU" | "XFSU",
    sourceLine: r.source_line as number | null,
    sourceElement: r.source_element as string | null,
    sourceText: r.source_text as string,
    occurredAt: r.occurred_at as Date | null,
    timeBasis: r.time_basis as string | null,
    station: r.station as string | null,
    flight: r.flight as string | null,
    flightDate: r.flight_date as string | null,
    carrierCode: r.carrier_code as string | null,
    discrepancy: r.discrepancy as string | null,
    toaTimestamp: r.toa_timestamp as Date | null,
    shipment: r.shipment as string | null,
    pieces: r.pieces as number | null,
    weight: r.weight as number | null,
    weightUnit: r.weight_unit as string | null,
    totalPieces: r.total_pieces as number | null,
  }));
}
