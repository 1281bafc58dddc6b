/** The status codes in the order of the specification's status table (CONTRACT §1). */
export const STATUS_CODES = [
  "RCS",
  "MAN",
  "DEP",
  "ARR",
  "RCF",
  "NFD",
  "DLV",
  "DDL",
  "RCT",
  "TFD",
  "DIS",
  "TOA",
] as const;
export type StatusCode = (typeof STATUS_CODES)[number];

/** What each code means, spelled out for people (the dashboard, docs); names as Cargo-IMP uses them. */
export const STATUS_NAMES: Readonly<Record<StatusCode, string>> = {
  RCS: "Received from shipper",
  MAN: "Manifested",
  DEP: "Departed",
  ARR: "Arrived",
  RCF: "Received from flight",
  NFD: "Consignee notified",
  DLV: "Delivered to consignee",
  DDL: "Delivered to door",
  RCT: "Received from other airline",
  TFD: "Transferred to other airline",
  DIS: "Discrepancy reported",
  TOA: "Estimated time of arrival",
};
export const ALL_STATES = "*";
/** What a subscription stores: codes in table order, or ["*"] for every code. */
export type StateSelection = readonly StatusCode[] | readonly ["*"];

const ORDER = new Map<string, number>(STATUS_CODES.map((code, i) => [code, i]));

export function isStatusCode(value: string): value is StatusCode {
  return ORDER.has(value);
}

/**
 * Canonical selection from a list of codes (any case, "*" allowed): table order, no repeats, and "*"
 * alone when it is among them. Returns the codes it did not recognise as `unknown`.
 */
export function normaliseStates(codes: readonly string[]): { states: StateSelection; unknown: string[] } {
  const upper = codes.map((c) => c.trim().toUpperCase());
  const unknown = upper.filter((c) => c !== ALL_STATES && !ORDER.has(c));
  if (upper.includes(ALL_STATES)) return { states: [ALL_STATES], unknown };
  const known = [...new Set(upper.filter(isStatusCode))].sort((a, b) => ORDER.get(a)! - ORDER.get(b)!);
  return { states: known, unknown };
}

/** REST's states string: codes separated by commas, spaces allowed, any case ("DEP, arr,TOA"). */
/** "DEP, ARR", "DEP ARR" and "DEP,ARR" all name DEP and ARR: commas, spaces or both separate codes. */
export function splitStatesString(value: string): string[] {
  return value.split(/[\s,]+/).filter((c) => c !== "");
}

/** How to write several states, for error messages: the codes comma-separated, as a request sends them. */
export const STATES_HINT = `status codes separated by commas or spaces, e.g. "DEP, ARR", or "*" for all; known: ${STATUS_CODES.join(", ")}`;

export function formatStates(states: StateSelection): string {
  return states.join(",");
}

export function matchesState(selection: readonly string[], state: string): boolean {
  return selection.includes(ALL_STATES) || selection.includes(state);
}
