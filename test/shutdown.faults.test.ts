/**
 * SIGTERM under load, over a real server process on PostgreSQL: every request the server accepted
 * is answered (no connection cut mid-request), and every event answered 202 is stored, as the
 * server that starts next on the same database shows. A connection the kernel had queued but the
 * server never took is reset when the listener closes; such a request was never accepted — the
 * server's own log (each request's id is its eventId) tells the two apart. And the standalone
 * delivery worker's stop: bounded by the same deadline as the gateway's.
 */
import http from "node:http";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { createPostgresDatabase } from "./support/postgres";
import { spawnServer } from "./support/process";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { spawnWorker } from "./support/worker-process";

type Outcome =
  { kind: "answered"; status: number; body: string } | { kind: "refused" } | { kind: "cut"; error: string };

/** One request on its own connection (no keep-alive), so "refused" and "cut mid-request" are told apart. */
function ingest(
  url: string,
  body: { eventId: string; awb: string; state: string; timestamp: string },
): Promise<Outcome> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const request = http.request(`${url}/carrier/handling/shipment/events`, {
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
        authorization: `Bearer ${ADMIN_KEY}`,
        connection: "close",
        "x-request-id": body.eventId,
      },
    });
    request.setTimeout(15_000, () => request.destroy(new Error("hung")));
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ kind: "answered", status: response.statusCode ?? 0, body: text }));
    });
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === "ECONNREFUSED"
          ? { kind: "refused" }
          : { kind: "cut", error: `${error.code ?? ""} ${error.message}` },
      ),
    );
    request.end(payload);
  });
}

describeBackend("postgres")("SIGTERM under load", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("answers every accepted request and stores every accepted event", async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    // debug: the log then has a line for every request the server read ("request received"), answered
    // or not, which tells a request cut before the server read it from one it read and dropped.
    const env = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "debug",
    };
    const server = await spawnServer(env);
    disposers.add(() => void server.child.kill("SIGKILL"));

    const accepted = new Map<string, string>(); // stored event id (from the 202) → awb
    const counts = { sent: 0, accepted: 0, closing503: 0, refused: 0, cut: 0, other: 0 };
    const cuts: Array<{ eventId: string; error: string }> = [];
    const others: string[] = [];
    let stop = false;
    const loops = Array.from({ length: 8 }, async (_, loop) => {
      const awb = `176-${String(1_000_000 + loop)}${(1_000_000 + loop) % 7}`;
      for (let i = 0; !stop; i++) {
        const eventId = `term-${loop}-${i}`;
        counts.sent++;
        const outcome = await ingest(server.url, {
          eventId,
          awb,
          state: "DEP",
          timestamp: new Date(Date.UTC(2026, 10, 21, 0, 0, 0, i)).toISOString(),
        });
        if (outcome.kind === "refused") {
          counts.refused++;
          return; // the listener is closed: nothing later can be accepted
        }
        if (outcome.kind === "cut") {
          counts.cut++;
          cuts.push({ eventId, error: outcome.error });
        } else if (outcome.status === 202) {
          counts.accepted++;
          accepted.set((JSON.parse(outcome.body) as { events: Array<{ eventId: string }> }).events[0]!.eventId, awb);
        } else if (outcome.status === 503) counts.closing503++;
        else {
          counts.other++;
          others.push(`${outcome.status} ${outcome.body.slice(0, 200)}`);
        }
      }
    });
    // SIGTERM in the middle of ingestion: once 50 events were accepted, however long that took.
    await until(() => counts.accepted >= 50 || counts.refused + counts.other > 0, {
      what: "50 events accepted",
      timeoutMs: 60_000,
    });
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    stop = true;
    await Promise.all(loops);

    // Cut connections the server never read are "not accepted"; one it read and then dropped is a failure.
    const seenByServer = new Set(
      server.logs.filter((entry) => entry.msg === "request received").map((entry) => entry.reqId),
    );
    expect(cuts.filter((cut) => seenByServer.has(cut.eventId))).toEqual([]);
    expect(others.slice(0, 3)).toEqual([]);
    expect(counts.accepted).toBeGreaterThanOrEqual(50);

    const next = await spawnServer(env);
    disposers.add(async () => {
      next.child.kill("SIGTERM");
      await next.exited;
    });
    const stored = new Set<string>();
    for (const awb of new Set(accepted.values())) {
      const history = await getJson(`${next.url}/carrier/handling/shipment/events?awb=${awb}`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      for (const event of history.body as Array<{ eventId: string }>) stored.add(event.eventId);
    }
    const lost = [...accepted.keys()].filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    console.log(
      `SIGTERM under load: ${counts.sent} requests — ${counts.accepted} accepted (all stored), ${counts.closing503} answered 503 while closing, ${counts.refused} refused at connect after close, ${counts.cut} reset in the kernel's queue before the server read them, 0 accepted requests cut, 0 lost`,
    );
  }, 120_000);
});

describeBackend("postgres")("the standalone delivery worker stopped with a send that never ends", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("exits 1 at its stop deadline (8 s) rather than waiting for the send, saying so", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { url, env } = await startApp("postgres", disposers, { DELIVERY_WORKER: "false" });
    const worker = await spawnWorker({
      DATABASE_URL: env.DATABASE_URL!,
      ALLOW_PRIVATE_CALLBACKS: "true",
      ...(env.SECRETS_KEY ? { SECRETS_KEY: env.SECRETS_KEY } : {}),
      DELIVERY_POLL_MS: "50",
    });
    disposers.add(() => void worker.child.kill("SIGKILL"));
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
    const awb = "020-12345675";
    const subscribed = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers,
      body: JSON.stringify({ awb, callback: `${receiver.url}/ok/hang`, states: "*" }),
    });
    expect(subscribed.status).toBe(201);
    await fetch(`${url}/carrier/handling/shipment/events`, {
      method: "POST",
      headers,
      body: JSON.stringify({ awb, state: "DEP" }),
    });
    // The worker's send hangs at the receiver (a claimed delivery not yet sent would be given back).
    await until(() => receiver.hangingCount() === 1, { what: "the send held open by the receiver" });
    worker.child.kill("SIGTERM");
    const code = await Promise.race([
      worker.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve("still running"), 15_000).unref()),
    ]);
    expect(code).toBe(1);
    expect(worker.logs.map((l) => l.msg)).toContain("stopping took too long; exiting without waiting for the rest");
  }, 60_000);
});
