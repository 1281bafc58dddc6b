/** The pages and bundles over plain HTTP: what a browser is sent, and what API clients still get. */
import Fastify from "fastify";
import pino from "pino";
import { registerWebRoutes } from "../src/web/web.routes";
import { Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";

describe("browser pages over HTTP", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  test.each(["/dashboard", "/graphql"])(
    "%s answers a browser with the page shell and strict security headers",
    async (path) => {
      const response = await fetch(`${url}${path}`, {
        headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = response.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe/);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await response.text();
      const bundle = path === "/dashboard" ? "dashboard" : "ide";
      expect(html).toContain(`<script defer src="/assets/${bundle}.js"></script>`);
      expect(html).not.toMatch(/https?:\/\//); // nothing from elsewhere
    },
  );

  test("GraphQL clients at /graphql are still answered by GraphQL", async () => {
    const query = encodeURIComponent("{ stationCodes }");
    const response = await getJson(`${url}/graphql?query=${query}`, {
      headers: { accept: "application/json", "apollo-require-preflight": "1" },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.stationCodes).toContain("FRA");
  });

  test("bundles are served compressed, with validators, and unknown names are a problem+json 404", async () => {
    const first = await fetch(`${url}/assets/ide.js`, { headers: { "accept-encoding": "gzip" } });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(first.headers.get("content-encoding")).toBe("gzip");
    const etag = first.headers.get("etag")!;
    expect((await first.arrayBuffer()).byteLength).toBeGreaterThan(100_000); // fetch decompressed it: GraphiQL is in there
    const again = await fetch(`${url}/assets/ide.js`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const missing = await getJson(`${url}/assets/..%2Fpackage.json`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
  });

  test("without built bundles the pages say so (503) instead of serving a blank page", async () => {
    const app = Fastify();
    registerWebRoutes(app, { assets: new Map(), log: pino({ level: "silent" }) });
    const bare = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const response = await getJson(`${bare}/dashboard`);
      expect(response.status).toBe(503);
      expect(response.body.code).toBe("SERVICE_UNAVAILABLE");
    } finally {
      await app.close();
    }
  });
});
