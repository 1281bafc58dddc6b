import { Writable } from "node:stream";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { loadConfig } from "../src/config";
import { compiledExecutionTotals } from "../src/graphql-core/compiled-executor";
import { createLogger } from "../src/log";
import { tracingOn } from "../src/tracing/spans";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { graphql, postJson } from "./support/http";
import { openSubscriber } from "./support/ws-protocol";
import { type ReceivedPost, startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
type Line = Record<string, unknown> & { msg: string };
/** version-traceId-parentId-flags */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

let awbSeq = 3_000_000;
/** A fresh AWB with a valid check digit. */
const nextAwb = () => {
  const serial = String(++awbSeq);
  return `176-${serial}${Number(serial) % 7}`;
};

/**
 * The whole gateway in this process (test/support/harness.ts startApp), with the logger
 * main.ts makes, writing into memory, and, with tracing on, spans going to `exporter` as they end.
 */
async function startGateway(
  disposers: Disposers,
  backend: (typeof BEHAVIOUR_BACKENDS)[number],
  { traced, exporter }: { traced: boolean; exporter?: InMemorySpanExporter },
) {
  const env = {
    DELIVERY_RETRY_SCHEDULE: "200ms,200ms",
    DELIVERY_POLL_MS: "50",
    RATE_LIMIT_PER_SECOND: "0",
    // Nothing listens there: with the test's exporter, nothing is sent to it either.
    ...(traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" } : {}),
  };
  const config = loadConfig(env);
  expect(config.tracing !== undefined).toBe(traced);
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n")) if (text) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  // Debug: "request received" is a pino line written inside each request (the access line is not pino's).
  const log = createLogger("debug", sink, { traceIds: config.tracing !== undefined });
  const { app, url } = await startApp(backend, disposers, env, {
    log,
    appOptions: exporter ? { spanExporter: exporter } : {},
  });
  const receiver = await startReceiver();
  disposers.add(() => receiver.close());
  const subscribe = async (awb: string) => {
    const res = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb, callback: `${receiver.url}/ok/traced`, states: "DEP" },
      admin,
    );
    expect(res.status).toBe(201);
    return res.body.subscriptionId as string;
  };
  const ingest = (awb: string, headers: Record<string, string> = {}) =>
    postJson(`${url}/carrier/handling/shipment/events`, { awb, state: "DEP" }, { ...admin, ...headers });
  const postsFor = (subscriptionId: string): ReceivedPost[] =>
    receiver.posts.filter((p) => JSON.parse(p.body).subscriptionId === subscriptionId);
  return { url, server: app.http.server, lines, receiver, subscribe, ingest, postsFor };
}

const traceIdOf = (span: ReadableSpan) => span.spanContext().traceId;
const spanIdOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe.each(BEHAVIOUR_BACKENDS)("tracing on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const exporter = new InMemorySpanExporter();
    const disposers = new Disposers();
    let gateway: Awaited<ReturnType<typeof startGateway>>;
    const spans = () => exporter.getFinishedSpans();
    const inTrace = (traceId: string) => spans().filter((s) => traceIdOf(s) === traceId);

    beforeAll(async () => {
      gateway = await startGateway(disposers, backend, { traced: true, exporter });
    });
    afterAll(() => disposers.disposeAll());
    afterEach(() => gateway.receiver.setPostStatus(204));

    it("follows one ingestion in one trace: the request, its transaction, each webhook POST and the receiver's traceparent", async () => {
      const awb = nextAwb();
      const subscriptionId = await gateway.subscribe(awb);
      // The first POST fails, so the retry is claimed from the database: both the send handed over by
      // the ingestion and the one read back from the outbox row must continue the trace.
      gateway.receiver.setPostStatus(500);
      gateway.receiver.onPost(() => gateway.receiver.setPostStatus(204));
      const answer = await gateway.ingest(awb);
      expect(answer.status).toBe(202);
      await until(() => gateway.postsFor(subscriptionId).length === 2, { what: "the POST and its retry" });
      await until(() => spans().filter((s) => s.name === "webhook POST").length >= 2, { what: "two send spans" });

      const server = spans().find(
        (s) => s.kind === SpanKind.SERVER && s.name === "POST /carrier/handling/shipment/events",
      )!;
      expect(server).toBeDefined();
      expect(server.parentSpanContext).toBeUndefined(); // no traceparent sent: a new trace
      expect(server.attributes).toMatchObject({
        "http.request.method": "POST",
        "http.route": "/carrier/handling/shipment/events",
        "http.response.status_code": 202,
        "url.path": "/carrier/handling/shipment/events",
      });
      const trace = inTrace(traceIdOf(server));
      const transaction = trace.find((s) => s.name === "ingest transaction")!;
      expect(transaction).toBeDefined();
      expect(parentOf(transaction)).toBe(spanIdOf(server));
      expect(transaction.attributes).toMatchObject({
        "cargo.ingest.events": 1,
        "cargo.ingest.stored": 1,
        "cargo.ingest.deliveries": 1,
      });
      const sends = trace.filter((s) => s.name === "webhook POST");
      expect(sends).toHaveLength(2);
      for (const send of sends) {
        expect(send.kind).toBe(SpanKind.CLIENT);
        expect(parentOf(send)).toBe(spanIdOf(transaction));
      }
      const [first, retry] = [...sends].sort(
        (a, b) => Number(a.attributes["cargo.delivery.attempt"]) - Number(b.attributes["cargo.delivery.attempt"]),
      );
      expect(first!.attributes).toMatchObject({ "http.response.status_code": 500, "cargo.delivery.attempt": 1 });
      expect(retry!.attributes).toMatchObject({
        "http.response.status_code": 204,
        "cargo.delivery.attempt": 2,
        "http.request.resend_count": 1,
        "url.full": `${gateway.receiver.url}/ok/traced`,
      });

      // Each POST's traceparent names the trace and the span of that very POST, sampled.
      const received = gateway.postsFor(subscriptionId).map((p) => TRACEPARENT.exec(String(p.headers.traceparent)));
      expect(received.map((m) => m?.[1])).toEqual([traceIdOf(server), traceIdOf(server)]);
      expect(received.map((m) => m?.[2])).toEqual([spanIdOf(first!), spanIdOf(retry!)]);
      expect(received.map((m) => m?.[3])).toEqual(["01", "01"]);
    });

    it("continues the trace a caller's traceparent names, through to the callback", async () => {
      const awb = nextAwb();
      const subscriptionId = await gateway.subscribe(awb);
      const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
      const callerSpan = "00f067aa0ba902b7";
      const answer = await gateway.ingest(awb, { traceparent: `00-${callerTrace}-${callerSpan}-01` });
      expect(answer.status).toBe(202);
      await until(() => gateway.postsFor(subscriptionId).length === 1, { what: "the POST" });
      await until(() => inTrace(callerTrace).some((s) => s.name === "webhook POST"), { what: "the send span" });

      const trace = inTrace(callerTrace);
      const server = trace.find((s) => s.kind === SpanKind.SERVER)!;
      expect(server.parentSpanContext).toMatchObject({ traceId: callerTrace, spanId: callerSpan, isRemote: true });
      expect(trace.map((s) => s.name).sort()).toEqual(
        ["POST /carrier/handling/shipment/events", "ingest transaction", "webhook POST"].sort(),
      );
      expect(TRACEPARENT.exec(String(gateway.postsFor(subscriptionId)[0]!.headers.traceparent))?.[1]).toBe(callerTrace);
    });

    it("records nothing for a trace its caller did not sample, and still passes its traceparent on", async () => {
      const awb = nextAwb();
      const subscriptionId = await gateway.subscribe(awb);
      const callerTrace = "0af7651916cd43dd8448eb211c80319c";
      const answer = await gateway.ingest(awb, { traceparent: `00-${callerTrace}-b7ad6b7169203331-00` });
      expect(answer.status).toBe(202);
      await until(() => gateway.postsFor(subscriptionId).length === 1, { what: "the POST" });

      const header = TRACEPARENT.exec(String(gateway.postsFor(subscriptionId)[0]!.headers.traceparent));
      expect([header?.[1], header?.[3]]).toEqual([callerTrace, "00"]);
      expect(inTrace(callerTrace)).toEqual([]);
      expect(gateway.lines.filter((line) => line.traceId === callerTrace)).toEqual([]);
    });

    it("gives a GraphQL operation a span, and its resolvers theirs, on graphql-js and compiled alike", async () => {
      const awb = nextAwb();
      await gateway.subscribe(awb);
      const query = `query Mine($awb: String) { subscriptions(awb: $awb) { items { awb deliveryCounts { pending } } } }`;
      const compiledBefore = compiledExecutionTotals().compiledAnswers;
      // First run: graphql-js; second: compiled by graphql-jit; third: the compiled query kept.
      for (let run = 0; run < 3; run++) {
        exporter.reset();
        const answer = await graphql(gateway.url, query, { awb }, admin);
        expect(answer.errors).toBeUndefined();
        expect(answer.data.subscriptions.items).toEqual([{ awb, deliveryCounts: { pending: 0 } }]);
        await until(() => spans().some((s) => s.name === "POST /graphql"), { what: "the request's span" });

        const server = spans().find((s) => s.name === "POST /graphql")!;
        expect(server.kind).toBe(SpanKind.SERVER);
        const trace = inTrace(traceIdOf(server));
        const operation = trace.find((s) => s.name === "query Mine")!;
        expect(operation.attributes).toMatchObject({
          "graphql.operation.type": "query",
          "graphql.operation.name": "Mine",
        });
        expect(parentOf(operation)).toBe(spanIdOf(server));
        const root = trace.find((s) => s.name === "Query.subscriptions")!;
        expect(parentOf(root)).toBe(spanIdOf(operation));
        // An awaited field (a DataLoader): a span; fields answered at once (awb, pending): none.
        const counts = trace.find((s) => s.name === "AwbSubscription.deliveryCounts")!;
        expect(counts.attributes).toMatchObject({ "graphql.field.path": "subscriptions.items.0.deliveryCounts" });
        expect(parentOf(counts)).toBe(spanIdOf(operation));
        expect(trace.map((s) => s.name).sort()).toEqual(
          ["POST /graphql", "query Mine", "Query.subscriptions", "AwbSubscription.deliveryCounts"].sort(),
        );
      }
      expect(compiledExecutionTotals().compiledAnswers).toBe(compiledBefore + 2);
    });

    it("puts a mutation's ingestion transaction under the mutation's field span", async () => {
      exporter.reset();
      const answer = await graphql(
        gateway.url,
        `
          mutation Record($awb: String!) {
            recordStatusEvents(events: [{ awb: $awb, state: DEP }]) {
              duplicate
            }
          }
        `,
        { awb: nextAwb() },
        admin,
      );
      expect(answer.errors).toBeUndefined();
      await until(() => spans().some((s) => s.name === "POST /graphql"), { what: "the request's span" });
      const field = spans().find((s) => s.name === "Mutation.recordStatusEvents")!;
      const transaction = spans().find((s) => s.name === "ingest transaction")!;
      expect(parentOf(transaction)).toBe(spanIdOf(field));
      expect(parentOf(field)).toBe(spanIdOf(spans().find((s) => s.name === "mutation Record")!));
    });

    it("writes the trace id into the lines logged during a traced request, the access line too", async () => {
      exporter.reset();
      const answer = await gateway.ingest(nextAwb());
      expect(answer.status).toBe(202);
      const reqId = answer.headers.get("x-request-id");
      const ofRequest = (msg: string) => gateway.lines.find((line) => line.msg === msg && line.reqId === reqId);
      const isIngestion = (s: ReadableSpan) => s.name === "POST /carrier/handling/shipment/events";
      await until(() => spans().some(isIngestion), { what: "the request's span" });
      await until(() => ofRequest("request completed") !== undefined, { what: "the access line" });
      const server = spans().find(isIngestion)!;
      const ids = { traceId: traceIdOf(server), spanId: spanIdOf(server) };
      const received = ofRequest("request received")!;
      const completed = ofRequest("request completed")!;
      expect(received).toMatchObject(ids);
      expect(completed).toMatchObject(ids);
      // The hand-written access line is still one JSON object with its usual fields.
      expect(completed).toMatchObject({ level: 30, res: { statusCode: 202 }, req: { method: "POST" } });
    });

    it("keeps Fastify's server settings and serves websocket subscriptions, which get no request span", async () => {
      // The traced server is made by the gateway (a Fastify serverFactory), no longer by Fastify.
      expect(gateway.server.requestTimeout).toBe(30_000);
      expect(gateway.server.keepAliveTimeout).toBe(72_000);
      expect(gateway.server.timeout).toBe(0);
      exporter.reset();
      const awb = nextAwb();
      const subscriber = await openSubscriber(gateway.url, admin.authorization);
      subscriber.subscribe("1", "subscription($awb: String!) { awbStatusChanged(awb: $awb) { awb state } }", { awb });
      try {
        // Ingest until the subscription, registered asynchronously, has seen one.
        await until(
          async () => {
            if (subscriber.received.length > 0) return true;
            expect((await gateway.ingest(awb)).status).toBe(202);
            return subscriber.received.length > 0;
          },
          { what: "the live event" },
        );
      } finally {
        subscriber.close();
      }
      expect(subscriber.received[0]).toEqual({ awbStatusChanged: { awb, state: "DEP" } });
      expect(subscriber.errors).toEqual([]);
      expect(spans().filter((s) => s.attributes["url.path"] === "/graphql")).toEqual([]);
    });
  });
});

describe("tracing off (no OTLP endpoint)", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("sends no traceparent with callbacks and writes no trace ids into log lines", async () => {
    const gateway = await startGateway(disposers, "pglite", { traced: false });
    expect(tracingOn()).toBe(false);
    const awb = nextAwb();
    const subscriptionId = await gateway.subscribe(awb);
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const answer = await gateway.ingest(awb, { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` });
    expect(answer.status).toBe(202);
    await until(() => gateway.postsFor(subscriptionId).length === 1, { what: "the POST" });
    await until(() => gateway.lines.filter((line) => line.msg === "request completed").length >= 2, {
      what: "the access lines",
    });

    expect(gateway.postsFor(subscriptionId)[0]!.headers.traceparent).toBeUndefined();
    expect(gateway.lines.filter((line) => line.msg === "request received").length).toBeGreaterThanOrEqual(2);
    expect(gateway.lines.filter((line) => "traceId" in line || "spanId" in line)).toEqual([]);
  });
});
