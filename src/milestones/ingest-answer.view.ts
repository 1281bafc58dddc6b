import { checkDigitOf, parseAwb } from "../domain/awb";
import type { FieldError } from "../domain/checker";
import type { MessageContents } from "../ingestion/carrier-ingest";
import type { IngestResult } from "./milestone.service";

/** A status of a carrier message that is not a milestone: recorded in the history, delivered to no one. */
export interface UnmappedStatusView {
  code: string;
  line: number | null;
  element: string | null;
  text: string;
  reason: string;
}

/**
 * The 202 answer of `POST …/events`: the stored events in the order read, the statuses of a carrier
 * message that became no milestone (a typo in a status code included, so the sender learns of it
 * without reading the history), and warnings about what was stored anyway.
 */
export interface IngestAnswerView {
  events: IngestResult[];
  unmapped: UnmappedStatusView[];
  warnings: FieldError[];
}

export function ingestAnswerView(
  results: IngestResult[],
  contents: MessageContents,
  checkDigit: "enforce" | "off",
): IngestAnswerView {
  return {
    events: results,
    unmapped: contents.statuses
      .filter((s) => !s.mapped)
      .map((s) => ({
        code: s.code,
        line: s.sourceLine,
        element: s.sourceElement,
        text: s.sourceText,
        reason: s.reason ?? "not one of the gateway's status codes",
      })),
    // With AWB_CHECK_DIGIT=enforce such an event is refused before this; `events[i]` names the answer's entry.
    warnings:
      checkDigit === "enforce"
        ? []
        : contents.events.flatMap((event, i) =>
            parseAwb(event.awb)?.checkDigitValid === false
              ? [
                  {
                    field: `events[${i}].awb`,
                    message: `${event.awb} has a wrong check digit (the first seven digits of its serial give ${checkDigitOf(event.awb.slice(4))}); stored, as AWB_CHECK_DIGIT=off`,
                  },
                ]
              : [],
          ),
  };
}
