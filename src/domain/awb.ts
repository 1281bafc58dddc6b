/**
 * Air Waybill numbers (CONTRACT §1): a 3-digit airline prefix and an 8-digit serial. Accepted as
 * "020-12345675", "02012345675" or "020 12345675"; always emitted as "020-12345675". The serial's last
 * digit is a check digit: the first seven digits mod 7.
 */
const AWB_INPUT = /^(\d{3})[- ]?(\d{8})$/;

export interface ParsedAwb {
  /** "PPP-NNNNNNNN" */
  canonical: string;
  checkDigitValid: boolean;
}

/** The check digit an 8-digit serial should end with: its first seven digits mod 7. */
export function checkDigitOf(serial: string): number {
  return Number(serial.slice(0, 7)) % 7;
}

/**
 * Why a canonical AWB ("020-12345670") is refused for its check digit, naming the digit it should
 * have, so a sender can tell a typo from a wrong rule.
 */
export function wrongCheckDigit(canonical: string): string {
  return `${canonical} has a wrong check digit: the first seven digits of its serial give ${checkDigitOf(canonical.slice(4))}`;
}

export function checkDigitValid(serial: string): boolean {
  return checkDigitOf(serial) === Number(serial[7]);
}

/** The AWB in canonical form, or null when it is not one of the three accepted forms. */
export function parseAwb(input: string): ParsedAwb | null {
  const match = AWB_INPUT.exec(input.trim());
  if (!match) return null;
  const [, prefix, serial] = match as unknown as [string, string, string];
  return { canonical: `${prefix}-${serial}`, checkDigitValid: checkDigitValid(serial) };
}

/**
 * Why `input` is not an AWB, as a field problem's message (null when it is one): what every input
 * that takes an AWB says, so a malformed one is never reported as missing.
 */
export function awbProblem(input: unknown): string | null {
  if (input === undefined || input === null || input === "") return "is required: an AWB such as 020-12345675";
  if (typeof input !== "string") return "must be one AWB such as 020-12345675 (given once, as text)";
  return parseAwb(input)
    ? null
    : `must be a 3-digit prefix and an 8-digit serial, such as 020-12345675, got ${JSON.stringify(input.slice(0, 40))}`;
}
