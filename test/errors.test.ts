import { AppError, ERROR_TABLE, toProblem } from "../src/errors";

describe("the error table", () => {
  // Clients are written against these codes and statuses: changing one must be a deliberate edit here.
  it("is pinned: every code with its HTTP status and websocket close code", () => {
    const pinned = Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, e]) => [code, [e.status, e.close]]));
    expect(pinned).toEqual({
      VALIDATION_FAILED: [400, 4400],
      MALFORMED_JSON: [400, 4400],
      GRAPHQL_PARSE_FAILED: [400, 4400],
      UNAUTHENTICATED: [401, 4401],
      INSUFFICIENT_SCOPE: [403, 4403],
      CALLBACK_NOT_REGISTERED: [403, 4403],
      NOT_FOUND: [404, 4404],
      METHOD_NOT_ALLOWED: [405, 4405],
      SUBSCRIPTION_NOT_FOUND: [404, 4404],
      STATION_NOT_FOUND: [404, 4404],
      DELIVERY_NOT_FOUND: [404, 4404],
      CLIENT_NOT_FOUND: [404, 4404],
      SUBSCRIPTION_EXISTS: [409, 4409],
      SUBSCRIPTION_LIMIT_REACHED: [409, 4409],
      PAYLOAD_TOO_LARGE: [413, 4413],
      UNSUPPORTED_MEDIA_TYPE: [415, 4415],
      HEADERS_TOO_LARGE: [431, 4431],
      CALLBACK_INVALID: [422, 4422],
      CALLBACK_UNREACHABLE: [424, 4424],
      QUERY_TOO_COMPLEX: [400, 4400],
      OPERATION_NOT_ALLOWED: [403, 4403],
      RATE_LIMITED: [429, 4429],
      SERVICE_UNAVAILABLE: [503, 4503],
      OPERATION_TIMED_OUT: [503, 4503],
      NOT_ACCEPTABLE: [406, 4406],
      INVALID_JSON_LD: [400, 4400],
      INVALID_LOGISTICS_OBJECT: [400, 4400],
      INVALID_QUERY_PARAMETER: [400, 4400],
      ACCESS_DENIED: [403, 4403],
      LOGISTICS_OBJECT_NOT_FOUND: [404, 4404],
      ACTION_REQUEST_NOT_FOUND: [404, 4404],
      LOGISTICS_EVENT_NOT_FOUND: [404, 4404],
      LOGISTICS_OBJECT_EXISTS: [409, 4409],
      PENDING_CHANGE_LIMIT_REACHED: [409, 4409],
      QUOTA_EXCEEDED: [429, 4429],
      ACTION_REQUEST_DECIDED: [422, 4422],
      DELEGATION_LIMIT_REACHED: [422, 4422],
      CHANGE_UNPROCESSABLE: [422, 4422],
      SUBSCRIPTION_NOT_WANTED: [422, 4422],
      SUBSCRIPTION_UNPROCESSABLE: [422, 4422],
      INTERNAL: [500, 4500],
    });
  });

  it("uses UPPER_SNAKE codes and close codes in the 4000 range that mirror the HTTP status", () => {
    for (const [code, entry] of Object.entries(ERROR_TABLE)) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
      expect(entry.close).toBe(4000 + entry.status);
      expect(entry.title.length).toBeGreaterThan(0);
    }
  });

  it("renders an RFC 9457 problem with the code, field errors and extensions", () => {
    const error = new AppError("SUBSCRIPTION_EXISTS", "Already subscribed", {
      extensions: { subscriptionId: "0b9f7c55-8a3c-4b0b-9e57-5b1b1b0c1c1c" },
    });
    expect(toProblem(error, "req-1")).toEqual({
      type: "urn:cargo-gateway:problem:subscription-exists",
      title: "The subscription already exists",
      status: 409,
      detail: "Already subscribed",
      code: "SUBSCRIPTION_EXISTS",
      subscriptionId: "0b9f7c55-8a3c-4b0b-9e57-5b1b1b0c1c1c",
      requestId: "req-1",
    });
  });

  it("does not let an extension overwrite the standard members", () => {
    const error = new AppError("NOT_FOUND", "gone", { extensions: { status: 200, code: "OK" } });
    expect(toProblem(error)).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });
});
