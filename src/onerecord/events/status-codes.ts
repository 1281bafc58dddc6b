import { STATUS_NAMES, type StatusCode as MilestoneState } from "../../domain/status";
import { OTHER_STATUS_NAMES } from "../../ingestion/status-codes";
import codeLists from "../vocabulary/code-lists.json";

/**
 * The gateway's status codes and carrier statuses as ONE Record's StatusCode code list (cargo 3.3's
 * eventCode of a StatusUpdateEvent), both ways. docs/ONE-RECORD.md "Logistics events" has the table.
 */

const CODE_LISTS = "https://onerecord.iata.org/ns/code-lists/";
export const STATUS_CODE_LIST = `${CODE_LISTS}StatusCode`;
/** "https://onerecord.iata.org/ns/code-lists/StatusCode#": a member's IRI is this and its label. */
export const STATUS_CODE_PREFIX = `${STATUS_CODE_LIST}#`;

type CodeList = { members: Array<{ iri: string; label: string }> };
const lists = codeLists.codeLists as Record<string, CodeList>;
const membersOf = (list: string) => lists[list]!.members;

/** The 37 labels of StatusCode (ARR, …, DIS_MSCA, …, TRM). */
export const STATUS_CODE_LABELS: readonly string[] = membersOf(STATUS_CODE_LIST).map((m) => m.label);
const LABELS = new Set(STATUS_CODE_LABELS);

export function isStatusCodeLabel(label: string): boolean {
  return LABELS.has(label);
}

export function statusCodeIri(label: string): string {
  return `${STATUS_CODE_PREFIX}${label}`;
}

/** The label of a StatusCode member's IRI; undefined for any other IRI (a non-member in the list's namespace included). */
export function statusCodeLabelOf(iri: string): string | undefined {
  if (!iri.startsWith(STATUS_CODE_PREFIX)) return undefined;
  const label = iri.slice(STATUS_CODE_PREFIX.length);
  return LABELS.has(label) ? label : undefined;
}

/** Whether an IRI is in the namespace of IATA's code lists (where an unknown member is an error, not another list). */
export function isIataCodeListIri(iri: string): boolean {
  return iri.startsWith(CODE_LISTS);
}

/** cargo:EventTimeType's members (closed). */
export const EVENT_TIME_TYPES = ["ACTUAL", "ESTIMATED", "EXPECTED", "PLANNED", "REQUESTED"] as const;
export type EventTimeType = (typeof EVENT_TIME_TYPES)[number];

/**
 * A milestone's eventCode label: its own code, but TOA (no StatusCode member: the orchestration's
 * expected arrival, an ARR whose time is EXPECTED) and DIS, which StatusCode lists per discrepancy
 * (DIS_MSCA, …); a DIS whose discrepancy is not known has none.
 */
export function milestoneCodeLabel(state: string, discrepancy: string | null): string | undefined {
  if (state === "TOA") return "ARR";
  if (state === "DIS") {
    const label = discrepancy === null ? undefined : `DIS_${discrepancy}`;
    return label !== undefined && LABELS.has(label) ? label : undefined;
  }
  return LABELS.has(state) ? state : undefined;
}

export function milestoneTimeType(state: string): EventTimeType {
  return state === "TOA" ? "EXPECTED" : "ACTUAL";
}

/**
 * The milestone a posted event is, when it is one the legacy API delivers: its code and time type
 * read back to the gateway's state. ARR expected or estimated is a TOA; any other code that is not
 * ACTUAL (a planned departure) has not happened, and is no milestone.
 */
export function milestoneStateOf(label: string, timeType: EventTimeType | undefined): MilestoneState | undefined {
  if (label === "ARR" && (timeType === "EXPECTED" || timeType === "ESTIMATED")) return "TOA";
  if (timeType !== undefined && timeType !== "ACTUAL") return undefined;
  if (label.startsWith("DIS_")) return "DIS";
  return (MILESTONE_LABELS as readonly string[]).includes(label) ? (label as MilestoneState) : undefined;
}

/** StatusCode labels that are the gateway's own states (TOA and DIS come through ARR and DIS_*). */
const MILESTONE_LABELS = ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD"] as const;

/** A short name for an event (cargo:eventName): the gateway's own names of the codes. */
export function eventNameOf(state: string, discrepancy: string | null): string {
  if (state === "TOA") return STATUS_NAMES.TOA;
  if (state === "DIS")
    return discrepancy === null
      ? `${STATUS_NAMES.DIS} (no discrepancy code given)`
      : `${STATUS_NAMES.DIS}: ${discrepancy}`;
  return (
    (STATUS_NAMES as Record<string, string>)[state] ?? OTHER_STATUS_NAMES[state] ?? INFORMATION_NAMES[state] ?? state
  );
}

const INFORMATION_NAMES: Readonly<Record<string, string>> = {
  OCI: "Other customs information",
  OSI: "Other service information",
};

/** A weight unit as carrier messages give it (K, L) as its MeasurementUnitCode IRI. */
export function weightUnitIri(unit: string | null): string | undefined {
  if (unit === "K") return `${CODE_LISTS}MeasurementUnitCode#KGM`;
  if (unit === "L") return `${CODE_LISTS}MeasurementUnitCode#LBR`;
  return undefined;
}
