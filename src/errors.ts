import type { FieldError } from "./domain/checker";

/**
 * The one table of error codes. Each code has one HTTP status (REST), is the GraphQL
 * `extensions.code`, and has one websocket close code (graphql-ws). test/errors.test.ts pins this
 * table: clients are written against these codes, so a change here must be deliberate.
 */
export const ERROR_TABLE = {
  VALIDATION_FAILED: { status: 400, close: 4400, title: "The request is not valid" },
  MALFORMED_JSON: { status: 400, close: 4400, title: "The body is not valid JSON" },
  GRAPHQL_PARSE_FAILED: { status: 400, close: 4400, title: "The GraphQL document is not valid GraphQL syntax" },
  UNAUTHENTICATED: { status: 401, close: 4401, title: "A valid API key is required" },
  INSUFFICIENT_SCOPE: { status: 403, close: 4403, title: "The API key lacks the scope for this operation" },
  CALLBACK_NOT_REGISTERED: {
    status: 403,
    close: 4403,
    title: "The callback is outside the client's registered prefixes",
  },
  NOT_FOUND: { status: 404, close: 4404, title: "No such resource" },
  METHOD_NOT_ALLOWED: { status: 405, close: 4405, title: "The resource does not take this method" },
  SUBSCRIPTION_NOT_FOUND: { status: 404, close: 4404, title: "No such subscription" },
  STATION_NOT_FOUND: { status: 404, close: 4404, title: "No such station" },
  DELIVERY_NOT_FOUND: { status: 404, close: 4404, title: "No such delivery" },
  CLIENT_NOT_FOUND: { status: 404, close: 4404, title: "No such client" },
  SUBSCRIPTION_EXISTS: { status: 409, close: 4409, title: "The subscription already exists" },
  SUBSCRIPTION_LIMIT_REACHED: { status: 409, close: 4409, title: "The client has reached its subscription limit" },
  PAYLOAD_TOO_LARGE: { status: 413, close: 4413, title: "The body is too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, close: 4415, title: "The body's media type is not accepted" },
  HEADERS_TOO_LARGE: { status: 431, close: 4431, title: "The request headers are too large" },
  CALLBACK_INVALID: { status: 422, close: 4422, title: "The callback cannot receive notifications" },
  CALLBACK_UNREACHABLE: { status: 424, close: 4424, title: "The callback could not be reached" },
  QUERY_TOO_COMPLEX: { status: 400, close: 4400, title: "The GraphQL operation exceeds the depth or cost limits" },
  OPERATION_NOT_ALLOWED: { status: 403, close: 4403, title: "Only allow-listed GraphQL operations run on this server" },
  RATE_LIMITED: { status: 429, close: 4429, title: "Too many requests" },
  SERVICE_UNAVAILABLE: { status: 503, close: 4503, title: "A dependency is unavailable; try again shortly" },
  OPERATION_TIMED_OUT: { status: 503, close: 4503, title: "The GraphQL operation ran longer than its time limit" },
  // ONE Record (docs/ONE-RECORD.md): answered as api:Error bodies.
  NOT_ACCEPTABLE: { status: 406, close: 4406, title: "No answer in a media type and version the client accepts" },
  INVALID_JSON_LD: { status: 400, close: 4400, title: "The body is not JSON-LD this server can read" },
  INVALID_LOGISTICS_OBJECT: { status: 400, close: 4400, title: "The body is not a valid ONE Record resource" },
  INVALID_QUERY_PARAMETER: { status: 400, close: 4400, title: "A query parameter is not valid" },
  ACCESS_DENIED: { status: 403, close: 4403, title: "The caller may not access this resource" },
  LOGISTICS_OBJECT_NOT_FOUND: { status: 404, close: 4404, title: "No such logistics object" },
  ACTION_REQUEST_NOT_FOUND: { status: 404, close: 4404, title: "No such action request" },
  LOGISTICS_EVENT_NOT_FOUND: { status: 404, close: 4404, title: "No such logistics event" },
  LOGISTICS_OBJECT_EXISTS: { status: 409, close: 4409, title: "A logistics object with this id already exists" },
  PENDING_CHANGE_LIMIT_REACHED: {
    status: 409,
    close: 4409,
    title: "The caller has too many change requests pending on this logistics object",
  },
  QUOTA_EXCEEDED: { status: 429, close: 4429, title: "The caller has stored what its daily quota allows" },
  ACTION_REQUEST_DECIDED: { status: 422, close: 4422, title: "The action request is no longer pending" },
  DELEGATION_LIMIT_REACHED: {
    status: 422,
    close: 4422,
    title: "The caller holds as many access delegations as this server keeps for it",
  },
  CHANGE_UNPROCESSABLE: { status: 422, close: 4422, title: "The change cannot be applied to the logistics object" },
  SUBSCRIPTION_NOT_WANTED: { status: 422, close: 4422, title: "This server wants no subscription to that topic" },
  SUBSCRIPTION_UNPROCESSABLE: {
    status: 422,
    close: 4422,
    title: "The subscription is well formed but this server cannot take it",
  },
  INTERNAL: { status: 500, close: 4500, title: "Internal error" },
} as const satisfies Record<string, { status: number; close: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export type { FieldError } from "./domain/checker";

/** The one error type the services throw; transports turn it into problem+json or a GraphQL error. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors: readonly FieldError[] | undefined;
  /** Extra members for the problem body (for example the existing subscription's id on a 409). */
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  /** Seconds, for 429 and 503 answers. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: {
      errors?: FieldError[];
      extensions?: Record<string, unknown>;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.errors = options.errors;
    this.extensions = options.extensions;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  get title(): string {
    return ERROR_TABLE[this.code].title;
  }
}

export function validationError(errors: FieldError[]): AppError {
  const detail = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join("; ");
  return new AppError("VALIDATION_FAILED", detail, { errors });
}

/** An RFC 9457 problem type for a code: a stable URN, documented in docs/API.md. */
export function problemType(code: ErrorCode): string {
  return `urn:cargo-gateway:problem:${code.toLowerCase().replace(/_/g, "-")}`;
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  requestId?: string;
  [extension: string]: unknown;
}

const STANDARD_MEMBERS = new Set(["type", "title", "status", "detail", "code", "errors", "requestId"]);

export function toProblem(error: AppError, requestId?: string): ProblemDetails {
  const extensions = Object.entries(error.extensions ?? {}).filter(([key]) => !STANDARD_MEMBERS.has(key));
  return {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(error.errors === undefined ? {} : { errors: [...error.errors] }),
    ...Object.fromEntries(extensions),
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * A failure whose message is the whole story for a person at a terminal (the entry points print it
 * alone, no stack): the data folder in use, the port taken.
 */
export class CliError extends Error {}
