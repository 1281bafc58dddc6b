import { isStatusCode } from "../domain/status";

/**
 * Status codes carrier messages use beyond the gateway's twelve (domain/status.ts), named after the
 * status table of IATA's ONE Record (X)FSU mapping
 * (https://github.com/IATA-Cargo/ONE-Record/blob/master/Documentation_website/docs/Orchestration/xfsu.md). A status with one of these is recorded for the history, not
 * delivered; so is one with a code in neither list.
 */
export const OTHER_STATUS_NAMES: Readonly<Record<string, string>> = {
  AWD: "Arrival documents delivered to the consignee",
  AWR: "Arrival documents received",
  BKD: "Booked",
  CCD: "Cleared by customs",
  CRC: "Reported to customs",
  DOC: "Documents received by the handling party",
  DPU: "Picked up from the shipper's door",
  FIW: "Freight into warehouse control",
  FOH: "Freight on hand",
  FOW: "Freight out of warehouse control",
  PRE: "Prepared for loading",
  TGC: "Transferred to customs or government control",
  TRM: "To be transferred to another carrier",
};

/** Cargo-IMP text elements that follow a status with more about it; they are not statuses. */
export const INFORMATION_LINES: Readonly<Record<string, string>> = {
  OCI: "other customs, security and regulatory information",
  OSI: "other service information",
  SSR: "special service request",
  ULD: "unit load devices",
};

export function isInformationLine(code: string): boolean {
  return Object.hasOwn(INFORMATION_LINES, code);
}

/** Why a status with this code is not delivered; null when it is a gateway status code. */
export function unmappedReason(code: string): string | null {
  if (isStatusCode(code)) return null;
  if (Object.hasOwn(INFORMATION_LINES, code)) return `an information line (${INFORMATION_LINES[code]}), not a status`;
  if (Object.hasOwn(OTHER_STATUS_NAMES, code))
    return `${code} (${OTHER_STATUS_NAMES[code]}) is not one of the gateway's status codes`;
  return `${code} is not a status code the gateway knows`;
}
