import { validationError } from "../errors";
import { type MilestoneInput, unknownStationProblem } from "../milestones/milestone.validate";
import type { CarrierStatusRow } from "../milestones/carrier-status.store";
import { CarrierMessageRejected, milestonesOf, type ParseOptions, statusRowsOf } from "./carrier-message";
import { parseFsu } from "./fsu.parse";
import { parseXfsu } from "./xfsu.parse";

/** The media types a carrier message comes in, and the format each one carries. */
export const CARRIER_MEDIA_TYPES = {
  "text/plain": "FSU",
  "application/xml": "XFSU",
  "text/xml": "XFSU",
} as const;

export type CarrierMediaType = keyof typeof CARRIER_MEDIA_TYPES;

/** The media type of a Content-Type header: parameters such as charset left out, lower case. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The carrier format of a Content-Type header (parameters such as charset ignored), if it is one. */
export function carrierFormatOf(contentType: string | undefined): "FSU" | "XFSU" | undefined {
  const type = mediaTypeOf(contentType);
  return Object.hasOwn(CARRIER_MEDIA_TYPES, type) ? CARRIER_MEDIA_TYPES[type as CarrierMediaType] : undefined;
}

/** How a message is read: the parsers' options, and the station data's list of stations. */
export interface ReadOptions extends ParseOptions {
  /** Whether a code is one of the carrier's stations: a milestone elsewhere refuses the message. */
  isStation: (code: string) => boolean;
}

/**
 * What one body or broker message asks to store: milestones (as JSON ingestion takes them) and, for a
 * carrier message, every status it reported, mapped or not, for the AWB's history.
 */
export interface MessageContents {
  events: MilestoneInput[];
  statuses: CarrierStatusRow[];
}

/**
 * The milestones and statuses of a carrier message (one or more FSU messages, or one XFSU); a message
 * the parser rejects is VALIDATION_FAILED with one field error per problem (each naming its line or
 * element).
 */
export function readCarrierMessage(format: "FSU" | "XFSU", text: string, options: ReadOptions): MessageContents {
  try {
    const messages = format === "FSU" ? parseFsu(text, options) : [parseXfsu(text, options)];
    const elsewhere = messages.flatMap((m) => m.statuses).filter((s) => s.station && !options.isStation(s.station));
    if (elsewhere.length > 0)
      throw validationError(
        elsewhere.map((s) => ({
          field: s.source.line !== null ? `line ${s.source.line}` : (s.source.element ?? "station"),
          message: unknownStationProblem(s.station!),
        })),
      );
    return { events: milestonesOf(messages), statuses: statusRowsOf(messages) };
  } catch (error) {
    // Field errors as every other refusal has them: the field names the line or element.
    if (error instanceof CarrierMessageRejected)
      throw validationError(error.problems.map(({ field, message }) => ({ field, message })));
    throw error;
  }
}
