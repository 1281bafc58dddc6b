/**
 * A live subscriber replaying from before what retention deleted. Retention keeps
 * an AWB's stream numbering (awb_stream), so its history has holes where old events were; a
 * dashboard with an empty history subscribes with `after: "0"`. The subscriber must get what is
 * kept and what comes next, and the server must go on answering and stop on SIGTERM.
 *
 * Run against the built server as its own process on both backends: a catch-up that re-read the
 * same page without end would, on the embedded database (whose queries resolve without an I/O
 * turn), starve the event loop, and the test's own with it were the server in this process.
 * Retention is aged by a short RETENTION_EVENTS_DAYS, as an operator would see it.
 */
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, testEnvironment } from "./support/harness";
import { type ServerProcess, spawnServer } from "./support/process";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { openSubscriber } from "./support/ws-protocol";

const SHIPMENT = "/carrier/handling/shipment";
const AWB_QUERY = `subscription($awb: String!, $after: String) { awbStatusChanged(awb: $awb, after: $after) { sequence state } }`;
/** README "Running it under a supervisor": a stop takes at most this long. */
const STOP_BOUND_MS = 8_000;
/**
 * A liveness bound on one /healthz answer, in seconds not milliseconds, so that a loaded machine does
 * not trip it: a healthy server answers in about a millisecond, a starved event loop never.
 */
const HEALTHZ_BOUND_MS = 3_000;

const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

/** Resolves with the exit code (or signal) if the process exits within `ms`, else with "still running". */
const exitWithin = (server: ServerProcess, ms: number) =>
  Promise.race([
    server.exited,
    new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms).unref()),
  ]);

describe.each(BACKENDS)("a live subscriber replaying past pruned history on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());

    it("gets the kept events and the next one, while /healthz answers throughout and SIGTERM stops the server", async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      const { env, cleanup } = await testEnvironment(backend, {
        LOG_LEVEL: "info",
        // Events without a delivery are deleted once 1.7 s old, checked every 200 ms.
        RETENTION_EVENTS_DAYS: "0.00002",
        RETENTION_INTERVAL_MS: "200",
        DELIVERY_POLL_MS: "50",
      });
      disposers.add(cleanup);
      const server = await spawnServer(env, 60_000);
      disposers.add(async () => {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
        await server.exited;
      });
      const { url } = server;

      const awb = "020-70000014";
      // Only MAN is notified: its delivery keeps its event; RCS and DEP have none and are pruned.
      const subscribed = await fetch(`${url}${SHIPMENT}/subscribe`, {
        method: "POST",
        headers,
        body: JSON.stringify({ awb, callback: `${receiver.url}/ok/pruned`, states: "MAN" }),
      });
      expect(subscribed.status).toBe(201);
      const ingest = async (states: string[]) => {
        const answer = await fetch(`${url}${SHIPMENT}/events`, {
          method: "POST",
          headers,
          body: JSON.stringify(states.map((state) => ({ awb, state }))),
        });
        expect(answer.status).toBe(202);
      };
      await ingest(["RCS", "MAN", "DEP"]); // positions 1, 2, 3
      const prunedEvents = async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        const line = text.split("\n").find((l) => l.startsWith('gateway_retention_deleted_total{kind="events"}'));
        return line ? Number(line.split(" ").pop()) : 0;
      };
      await until(async () => (await prunedEvents()) >= 2, { what: "retention to delete positions 1 and 3" });

      // /healthz polled from here to the end, each answer bounded.
      const slowOrFailed: string[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          try {
            const answer = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_BOUND_MS) });
            if (answer.status !== 200) slowOrFailed.push(`status ${answer.status}`);
          } catch (error) {
            slowOrFailed.push(String(error));
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      })();

      const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
      disposers.add(() => subscriber.close());
      const positions = () => subscriber.received.map((d) => (d.awbStatusChanged as { sequence: string }).sequence);
      try {
        subscriber.subscribe("pruned", AWB_QUERY, { awb, after: "0" });
        await ingest(["ARR"]); // position 4, live
        await until(() => positions().length >= 2, { what: "the kept event and the new one", timeoutMs: 10_000 });
        // One event more: an AWB's events reach a subscriber in order, so a repeat or an error of the
        // catch-up would show before it.
        await ingest(["DLV"]); // position 5
        await until(() => positions().includes("5") || subscriber.errors.length > 0, {
          what: "the next event",
          timeoutMs: 10_000,
        });
      } finally {
        polling = false;
        await poller;
      }

      expect(positions()).toEqual(["2", "4", "5"]);
      expect(subscriber.errors).toEqual([]);
      expect(slowOrFailed).toEqual([]);

      server.child.kill("SIGTERM");
      expect(await exitWithin(server, STOP_BOUND_MS + 2_000)).toBe(0);
    }, 120_000);
  });
});
