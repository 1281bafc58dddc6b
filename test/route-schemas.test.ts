/**
 * Route schemas do the work (src/http/server.ts, validation.ts, schema.ts): answers are written by
 * fast-json-stringify from their response schema — an answer outside it fails with 500 instead of
 * going out changed — and requests are checked by ajv before the handler, with the route's own reading
 * wording a refusal. The shared patterns accept exactly what the domain checks accept.
 */
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { parseAwb } from "../src/domain/awb";
import { UUID_PATTERN } from "../src/domain/ids";
import { validationError } from "../src/errors";
import { addSchemas, ALWAYS, objectSchema, PATTERNS, problems, problemSchema } from "../src/http/schema";
import { enforceRouteAccess } from "../src/http/route-access";
import { createHttpServer } from "../src/http/server";

interface Tally {
  name: string;
  count: number;
  note: string | null;
}
const tally = objectSchema<Tally>({
  properties: { name: { type: "string" }, count: { type: "integer" }, note: { type: ["string", "null"] } },
});

/** What the handler of GET /tally/:which returns. */
const BODIES: Record<string, unknown> = {
  valid: { name: 'line\u2028sep "quoted" \\ \u0007 \ud800 and a long enough tail', count: 3, note: null },
  missingField: { name: "a", note: null },
  wrongType: { name: "a", count: "many", note: null },
  wrongNullable: { name: "a", count: 1, note: 5 },
};

async function tallyServer({ oldSerializer = false } = {}): Promise<FastifyInstance> {
  const app = createHttpServer(pino({ level: "silent" }));
  addSchemas(app, problemSchema);
  // The serializer this project used before: JSON.stringify, whatever the schema says.
  if (oldSerializer) app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.get<{ Params: { which: string } }>(
    "/tally/:which",
    { schema: { response: { 200: tally, ...problems(ALWAYS) } } },
    async (request) => BODIES[request.params.which],
  );
  await app.ready();
  return app;
}

describe("answers are written from their response schema", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await tallyServer();
  });
  afterAll(() => app.close());

  it("writes a body that fits its schema byte for byte as JSON.stringify would", async () => {
    const res = await app.inject({ url: "/tally/valid" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.payload).toBe(JSON.stringify(BODIES.valid));
  });

  it.each(["missingField", "wrongType", "wrongNullable"])(
    "answers a body outside its schema (%s) with 500 INTERNAL, not with a changed body",
    async (which) => {
      const res = await app.inject({ url: `/tally/${which}`, headers: { "x-request-id": `tally-${which}` } });
      expect(res.statusCode).toBe(500);
      expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
      expect(res.json()).toEqual({
        type: "urn:cargo-gateway:problem:internal",
        title: "Internal error",
        status: 500,
        detail: "An unexpected error occurred; quote the request id when reporting it",
        code: "INTERNAL",
        requestId: `tally-${which}`,
      });
    },
  );

  it("would have sent those bodies unchecked with the JSON.stringify serializer this replaces", async () => {
    const old = await tallyServer({ oldSerializer: true });
    try {
      for (const which of ["missingField", "wrongType", "wrongNullable"]) {
        const res = await old.inject({ url: `/tally/${which}` });
        expect({ which, status: res.statusCode, body: res.payload }).toEqual({
          which,
          status: 200,
          body: JSON.stringify(BODIES[which]),
        });
      }
    } finally {
      await old.close();
    }
  });
});

describe("requests are checked against their schema before the handler", () => {
  let app: FastifyInstance;
  const handled: unknown[] = [];
  beforeAll(async () => {
    app = createHttpServer(pino({ level: "silent" }));
    enforceRouteAccess(app, async () => null);
    addSchemas(app, problemSchema);
    const body = {
      type: "object",
      required: ["name"],
      additionalProperties: false,
      properties: {
        name: { type: "string", minLength: 1 },
        items: { type: "array", items: { type: "object", properties: { count: { type: "integer" } } } },
      },
    };
    app.post("/plain", { schema: { body }, config: { auth: "public" } }, async (request) => {
      handled.push(request.body);
      return { ok: true };
    });
    app.post(
      "/explained",
      {
        schema: { body },
        config: {
          auth: "public",
          explainInvalid: (request) => {
            if ((request.body as { name?: unknown }).name === "silent") return;
            throw validationError([{ field: "name", message: "is what the service says" }]);
          },
        },
      },
      async () => ({ ok: true }),
    );
    app.post("/keyed", { schema: { body }, config: { scope: "subscriptions" } }, async () => ({ ok: true }));
    app.get<{ Querystring: { first?: number } }>(
      "/paged",
      {
        schema: {
          querystring: {
            type: "object",
            properties: { first: { type: "integer", minimum: 1, maximum: 500, default: 50 } },
          },
        },
        config: { auth: "public" },
      },
      async (request) => ({ first: request.query.first }),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  const post = (url: string, payload: unknown) =>
    app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(payload),
    });

  it("refuses with VALIDATION_FAILED naming every field, as the services name them, and never runs the handler", async () => {
    const res = await post("/plain", { items: [{ count: 1 }, { count: "2" }], extra: true });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    const problem = res.json();
    expect(problem.code).toBe("VALIDATION_FAILED");
    expect(problem.errors.map((e: { field: string }) => e.field).sort()).toEqual(["extra", "items[1].count", "name"]);
    expect(handled).toEqual([]);
    // JSON types are not coerced in bodies: "2" is not an integer, 1 is not a string.
    expect((await post("/plain", { name: 1 })).statusCode).toBe(400);
    expect((await post("/plain", { name: "x", items: [{ count: 2 }] })).statusCode).toBe(200);
    expect(handled).toEqual([{ name: "x", items: [{ count: 2 }] }]);
  });

  it("words a refusal as the route's own reading of the request does, falling back to the schema's words", async () => {
    const explained = await post("/explained", { name: "" });
    expect(explained.json()).toMatchObject({
      status: 400,
      code: "VALIDATION_FAILED",
      errors: [{ field: "name", message: "is what the service says" }],
    });
    const silent = await post("/explained", { name: "silent", extra: 1 });
    expect(silent.json()).toMatchObject({ status: 400, errors: [{ field: "extra" }] });
  });

  it("authenticates before it validates: no key is 401 whatever the body", async () => {
    const res = await post("/keyed", { not: "valid" });
    expect(res.json()).toMatchObject({ status: 401, code: "UNAUTHENTICATED" });
  });

  it("reads a query string's integer as Number() does, with its default, and refuses what is not one", async () => {
    const first = async (query: string) => {
      const res = await app.inject({ url: `/paged${query}` });
      return res.statusCode === 200 ? res.json().first : res.statusCode;
    };
    expect(await first("")).toBe(50);
    expect(await first("?first=20")).toBe(20);
    expect(await first("?first=%2020")).toBe(20);
    expect(await first("?first=1e2")).toBe(100);
    for (const bad of ["abc", "", "0", "501", "2.5", "0x"]) expect(await first(`?first=${bad}`)).toBe(400);
    expect(await first("?first=1&first=2")).toBe(400);
  });
});

describe("the patterns the schemas share accept exactly what the domain accepts", () => {
  const matches = (pattern: string, value: string) => new RegExp(pattern, "u").test(value);
  const chars = (alphabet: string[], maxLength: number) =>
    fc.array(fc.constantFrom(...alphabet), { maxLength }).map((a) => a.join(""));
  const spaces = [" ", "\t", "\n", "\u00a0", "\u2028", "\ufeff", "\u3000", "\u180e", "\u200b"];

  it("an AWB: parseAwb (which trims first)", () => {
    const digits = (n: number) =>
      fc.array(fc.constantFrom("0", "7", "9", "٣", "x"), { minLength: n - 1, maxLength: n + 1 }).map((a) => a.join(""));
    const awbish = fc
      .tuple(chars(spaces, 2), digits(3), fc.constantFrom("", "-", " ", "--", "/", "\t"), digits(8), chars(spaces, 2))
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(
        fc.oneof(awbish, chars(["0", "1", "7", "9", "-", " ", "x", ...spaces], 16), fc.string({ maxLength: 16 })),
        (value) => matches(PATTERNS.awb, value) === (parseAwb(value) !== null),
      ),
      { numRuns: 10_000, seed: 4711 },
    );
  });

  it("an id: UUID_PATTERN, in either case", () => {
    const uuidish = fc
      .tuple(
        fc.uuid(),
        fc.array(fc.tuple(fc.nat(35), fc.constantFrom("A", "g", "0", "9", "-", "F", "8", "c")), { maxLength: 2 }),
      )
      .map(([uuid, edits]) => {
        const s = uuid.split("");
        for (const [at, c] of edits) s[at] = c;
        return s.join("");
      });
    fc.assert(
      fc.property(
        fc.oneof(
          uuidish,
          uuidish.map((s) => s.toUpperCase()),
          fc.string(),
        ),
        (value) => matches(PATTERNS.uuid, value) === UUID_PATTERN.test(value),
      ),
      { numRuns: 10_000, seed: 4712 },
    );
  });

  it("not blank: a string that is not empty once trimmed", () => {
    fc.assert(
      fc.property(
        fc.oneof(chars([...spaces, "a", "."], 6), fc.string({ maxLength: 6 })),
        (value) => matches(PATTERNS.notBlank, value) === (value.trim() !== ""),
      ),
      { numRuns: 10_000, seed: 4713 },
    );
  });
});
