/** An IATA station code: exactly three upper-case letters (lower case is refused, CONTRACT §1). */
export const IATA_CODE_PATTERN = /^[A-Z]{3}$/;

export function isIataCode(value: unknown): value is string {
  return typeof value === "string" && IATA_CODE_PATTERN.test(value);
}
