import type { StoredCarrierStatus } from "./carrier-status.store";

/** Pieces and weight a status gave. */
export interface QuantityView {
  /** T: the total consignment; P: part of it; D, S: divided or split. */
  shipment: string;
  pieces: number | null;
  weight: number | null;
  /** K: kilograms, L: pounds. */
  weightUnit: string | null;
  totalPieces: number | null;
}

/** A recorded carrier status as GET …/carrier-statuses shows it. */
export interface CarrierStatusView {
  id: string;
  awb: string;
  code: string;
  /** Whether it is a gateway milestone; `milestoneEventId` is then the stored milestone's eventId. */
  mapped: boolean;
  milestoneEventId: string | null;
  reason: string | null;
  format: string;
  source: { line: number | null; element: string | null; text: string };
  timestamp: string | null;
  timeBasis: string | null;
  station: string | null;
  flight: string | null;
  flightDate: string | null;
  carrier: string | null;
  discrepancy: string | null;
  toaTimestamp: string | null;
  quantity: QuantityView | null;
  receivedAt: string;
}

export function carrierStatusView(s: StoredCarrierStatus): CarrierStatusView {
  return {
    id: s.id,
    awb: s.awb,
    code: s.code,
    mapped: s.mapped,
    milestoneEventId: s.milestoneId,
    reason: s.reason,
    format: s.format,
    source: { line: s.sourceLine, element: s.sourceElement, text: s.sourceText },
    timestamp: s.occurredAt?.toISOString() ?? null,
    timeBasis: s.timeBasis,
    station: s.station,
    flight: s.flight,
    flightDate: s.flightDate,
    carrier: s.carrierCode,
    discrepancy: s.discrepancy,
    toaTimestamp: s.toaTimestamp?.toISOString() ?? null,
    quantity:
      s.shipment === null
        ? null
        : {
            shipment: s.shipment,
            pieces: s.pieces,
            weight: s.weight,
            weightUnit: s.weightUnit,
            totalPieces: s.totalPieces,
          },
    receivedAt: s.receivedAt.toISOString(),
  };
}
