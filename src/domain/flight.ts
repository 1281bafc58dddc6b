/**
 * A flight designator as milestones carry it: the airline's two-character code (or three-letter ICAO
 * code), one to four digits, an optional operational suffix: "LH400", "LH8160", "O31698", "BA0117A".
 * JSON ingestion and the carrier-message parsers accept the same designators.
 */
export const FLIGHT_DESIGNATOR = /^[A-Z0-9]{2}[A-Z]?\d{1,4}[A-Z]?$/;

export function isFlightDesignator(value: unknown): value is string {
  return typeof value === "string" && FLIGHT_DESIGNATOR.test(value);
}
