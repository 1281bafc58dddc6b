import { randomUUID } from "node:crypto";
import type { AppError, ErrorCode } from "../errors";
import api from "./vocabulary/api.json";
import { ONE_RECORD_CONTEXT } from "./jsonld-context";

/**
 * An AppError as the ONE Record API's `api:Error` (the specification's implementation guidelines, "Error
 * Handling"): the title is the 2.3 table's for the status, and each detail's `api:hasCode` is the HTTP
 * status, as the specification requires of synchronous errors; the gateway's own code (ERROR_TABLE)
 * begins the message, so a client can tell two 400s apart. A field at fault is named by its property
 * IRI in `api:hasProperty` when the error says which (`FieldError.field` holding an IRI), and the
 * resource concerned in `api:hasResource`.
 */
export function apiErrorBody(error: AppError, resource?: string): Record<string, unknown> {
  const all = error.errors?.length ? error.errors : [{ field: "", message: error.message }];
  // A body naming 10,000 wrong properties would otherwise be answered with 10,000 details (about 3 MB).
  const listed =
    all.length <= MAX_ERROR_DETAILS
      ? all
      : [
          ...all.slice(0, MAX_ERROR_DETAILS - 1),
          { field: "", message: `${all.length - MAX_ERROR_DETAILS + 1} more errors not listed (MAX_ERROR_DETAILS)` },
        ];
  const details = listed.map((detail) => ({
    "@type": "api:ErrorDetail",
    "@id": embeddedId(),
    "api:hasCode": String(error.status),
    "api:hasMessage": `${error.code}: ${detail.field && !isIri(detail.field) ? `${detail.field}: ` : ""}${detail.message}`,
    ...(detail.field && isIri(detail.field) ? { "api:hasProperty": detail.field } : {}),
    ...(resource === undefined ? {} : { "api:hasResource": resource }),
  }));
  return {
    "@context": ONE_RECORD_CONTEXT,
    "@type": "api:Error",
    "@id": embeddedId(),
    "api:hasTitle": apiErrorTitle(error.code, error.status, error.title),
    "api:hasErrorDetail": details,
  };
}

/** Details in one api:Error; past it, the last says how many more there were. */
export const MAX_ERROR_DETAILS = 100;

/** Which of the three 400 titles the specification lists fits a code. */
const BAD_REQUEST_TITLES: Partial<Record<ErrorCode, string>> = {
  INVALID_LOGISTICS_OBJECT: "Invalid resource",
  INVALID_QUERY_PARAMETER: "Invalid query parameter request",
};

const TITLE_BY_STATUS = new Map<number, string>();
for (const { httpStatus, title } of api.errorTitles.titles)
  if (!TITLE_BY_STATUS.has(httpStatus)) TITLE_BY_STATUS.set(httpStatus, title);

/** The specification's title for a status (its first for 400: "Invalid body request"); ours where it lists none (406, 429, 503…). */
export function apiErrorTitle(code: ErrorCode, status: number, ownTitle: string): string {
  return (status === 400 ? BAD_REQUEST_TITLES[code] : undefined) ?? TITLE_BY_STATUS.get(status) ?? ownTitle;
}

/**
 * The specification asks every node of an answer to have an `@id`; an error's nodes are not
 * resources of their own, so they get embedded object ids (the specification's "internal:" form).
 */
function embeddedId(): string {
  return `internal:${randomUUID()}`;
}

function isIri(field: string): boolean {
  return /^https?:\/\//.test(field);
}
