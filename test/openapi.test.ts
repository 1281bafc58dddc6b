/**
 * /openapi.json as a running gateway serves it: Redocly's linter with its recommended rules finds
 * nothing, and what the document says of each operation holds over HTTP: the operations whose
 * `security` needs a key refuse a request without one (401), the others do not, and the 431 every
 * operation lists is what the server answers for headers over 16 KiB.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";

type Json = any;
type LintReport = {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
};

const REDOCLY = path.resolve(__dirname, "..", "node_modules", "@redocly", "cli", "bin", "cli.js");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
/** A value for each path parameter the routes have: well formed, naming nothing that exists. */
const PATH_VALUES: Record<string, string> = {
  id: "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a",
  deliveryId: "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6b",
  IATACode: "FRA",
};

describe("the OpenAPI document", () => {
  const disposers = new Disposers();
  let url: string;
  let doc: Json;
  let operations: Array<{ method: string; template: string; operation: Json }>;

  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    const answer = await getJson(`${url}/openapi.json`);
    expect(answer.status).toBe(200);
    doc = answer.body;
    operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ method: method.toUpperCase(), template, operation })),
    );
  });
  afterAll(() => disposers.disposeAll());

  it("passes Redocly's lint with the recommended rules: no error, no warning", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "cgw-openapi-"));
    disposers.add(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(doc, null, 2));
    // In a folder of its own, so that no redocly.yaml but the built-in recommended rules applies; the
    // CLI's telemetry and update check would reach for the internet.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [REDOCLY, "lint", "--extends=recommended", "--format=json", file],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" })); // exits 1 when it finds errors
    const report = JSON.parse(stdout) as LintReport;
    const found = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(found).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });

  it("names every operation with a summary and an operationId a client can use as a method name", () => {
    for (const { method, template, operation } of operations) {
      const what = `${method} ${template}`;
      expect({ what, summary: typeof operation.summary }).toEqual({ what, summary: "string" });
      expect({ what, operationId: operation.operationId }).toEqual({
        what,
        operationId: expect.stringMatching(/^[a-z][A-Za-z]+$/),
      });
    }
  });

  it("says which operations need a key, as the gateway answers a request without one", async () => {
    expect(operations.length).toBeGreaterThan(10);
    let keyed = 0;
    for (const { method, template, operation } of operations) {
      const security = operation.security as Array<Record<string, string[]>>;
      const needsKey = security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0);
      if (needsKey) keyed += 1;
      const filled = template.replace(/\{([^}]+)\}/g, (_, name: string) => PATH_VALUES[name]!);
      const graphql = template === "/graphql";
      const answer = await fetch(`${url}${filled}${graphql && method === "GET" ? "?query=%7B__typename%7D" : ""}`, {
        method,
        // A content type, as Apollo's protection against cross-site requests wants of a GraphQL request.
        headers: { "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: graphql ? '{"query":"{__typename}"}' : "{}" }),
      });
      await answer.arrayBuffer();
      const what = `${method} ${template}`;
      // Without a key: 401 where one is needed; elsewhere neither 401 nor 403 (no other credential is asked).
      const refusedWithoutKey = needsKey ? answer.status === 401 : answer.status === 401 || answer.status === 403;
      expect({ what, needsKey, refusedWithoutKey }).toEqual({
        what,
        needsKey,
        refusedWithoutKey: needsKey,
      });
    }
    expect(keyed).toBeGreaterThan(0);
  });

  it("lists the 431 the server answers for headers over 16 KiB on every operation", async () => {
    for (const { method, template, operation } of operations)
      expect({ what: `${method} ${template}`, has431: "431" in operation.responses }).toEqual({
        what: `${method} ${template}`,
        has431: true,
      });
    const answer = await fetch(`${url}/healthz`, { headers: { "x-padding": "x".repeat(17 * 1024) } });
    expect(answer.status).toBe(431);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    expect(await answer.json()).toMatchObject({ status: 431, code: "HEADERS_TOO_LARGE" });
  });
});
