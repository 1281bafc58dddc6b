import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";

describe.each(BACKENDS)("the gateway process on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let url: string;
    let app: Awaited<ReturnType<typeof startApp>>["app"];

    beforeAll(async () => {
      ({ url, app } = await startApp(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    it("answers /healthz without touching a dependency", async () => {
      const res = await fetch(`${url}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ok" });
    });

    it("reports readiness with the database up and migrations applied", async () => {
      const res = await fetch(`${url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        status: "ready",
        database: "up",
        databaseKind: backend,
        migrationsApplied: true,
        redis: "not used",
        broker: "not used",
      });
    });

    it("serves GraphQL over HTTP at /graphql", async () => {
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ health { status database databaseKind } }" }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        data: { health: { status: "ready", database: "up", databaseKind: backend } },
      });
    });

    it("serves GraphQL over graphql-ws on the same port", async () => {
      const client = createClient({
        url: `${url.replace("http", "ws")}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      disposers.add(() => client.dispose());
      const result = await new Promise((resolve, reject) => {
        let value: unknown;
        client.subscribe(
          { query: "{ health { status } }" },
          { next: (v) => (value = v), error: reject, complete: () => resolve(value) },
        );
      });
      expect(result).toEqual({ data: { health: { status: "ready" } } });
    });

    it("answers an unknown route with a 404 problem", async () => {
      const res = await fetch(`${url}/no/such/route?x=1`);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = await res.json();
      expect(body).toMatchObject({
        status: 404,
        code: "NOT_FOUND",
        title: expect.any(String),
        type: expect.stringMatching(/^urn:/),
        detail: "No route for GET /no/such/route",
      });
      expect(body.requestId).toBe(res.headers.get("x-request-id"));
    });

    it("answers malformed JSON with a 400 problem that shows no internals", async () => {
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"query": "{ health',
      });
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body).toMatchObject({ status: 400, code: "MALFORMED_JSON" });
      expect(JSON.stringify(body)).not.toMatch(/at .*\.(js|ts):\d+/);
    });

    it("refuses a body over 1 MiB with 413", async () => {
      const big = JSON.stringify({ query: "{ health { status } }", padding: "x".repeat(1024 * 1024) });
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    });

    it("refuses a body that is not JSON with 415", async () => {
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "text/csv" },
        body: "a,b",
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    });

    it("gives a GraphQL validation error the contract's code", async () => {
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ nope }" }),
      });
      const body = await res.json();
      expect(body.errors[0].extensions).toEqual({ code: "VALIDATION_FAILED" });
    });

    it("reports not ready (503) when a migration is not recorded as applied", async () => {
      const [latest] = await app.database.prisma.$queryRawUnsafe<Array<{ id: string }>>(
        "SELECT id FROM _prisma_migrations ORDER BY started_at DESC LIMIT 1",
      );
      await app.database.prisma.$executeRawUnsafe(
        "UPDATE _prisma_migrations SET finished_at = NULL WHERE id = $1",
        latest!.id,
      );
      try {
        const res = await fetch(`${url}/readyz`);
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({
          code: "SERVICE_UNAVAILABLE",
          checks: { database: "up", migrationsApplied: false },
        });
      } finally {
        await app.database.prisma.$executeRawUnsafe(
          "UPDATE _prisma_migrations SET finished_at = now() WHERE id = $1",
          latest!.id,
        );
      }
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    });

    it("echoes a caller's request id and makes one up otherwise", async () => {
      const given = await fetch(`${url}/healthz`, { headers: { "x-request-id": "trace-abc.123" } });
      expect(given.headers.get("x-request-id")).toBe("trace-abc.123");
      const made = await fetch(`${url}/healthz`, { headers: { "x-request-id": "bad id with spaces" } });
      expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});
