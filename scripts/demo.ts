// npm run demo — the gateway's main flow, walked against a running gateway as a client would:
//   a local receiver (answers OPTIONS with `Allow: POST`, checks every POST's signature), a live GraphQL
//   websocket subscriber, a subscription, a JSON milestone and an FSU in, both notifications received and
//   verified, both live events seen, then the AWB read through ONE Record. Each step is printed; the
//   first that fails ends the run with exit code 1 (2: a setting missing).
// npm run demo -- --receive <port>: only the receiver, on that port, printing each notification.
//
// GATEWAY (default http://127.0.0.1:8080, what `npm start` serves), KEY (an API key with the scopes
// subscriptions, events:write and events:read) and SIGNING_SECRET (its client's `whsec_…` secret) come
// from the environment or --gateway, --key, --secret. The first start of a gateway prints both.
import { createHmac, randomInt, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const USAGE = `usage: npm run demo [-- --gateway <url> --key <API key> --secret <whsec_…>]
       npm run demo -- --receive <port> [--secret <whsec_…>]
  GATEWAY, KEY and SIGNING_SECRET in the environment do the same; GATEWAY defaults to http://127.0.0.1:8080.
  The gateway must allow callbacks to this machine: start it with ALLOW_PRIVATE_CALLBACKS=true.`;
/** How long a step waits for what the gateway sends (a notification, a live event). */
const STEP_TIMEOUT_MS = 60_000;
const FSU_EXAMPLE = path.resolve(__dirname, "../../docs/examples/fsu-dep.txt");
const FSU_EXAMPLE_AWB = "020-12345675";

class StepFailed extends Error {}

/** A notification as the receiver got it, with the signature that verified it (undefined: none did). */
interface Notification {
  path: string;
  body: string;
  webhookId: string;
  verifiedBy: string | undefined;
}

/**
 * Checks a notification as docs/API.md tells a receiver to: the HMAC-SHA256 of `id.timestamp.body`,
 * keyed with the base64-decoded part of the `whsec_` secret, must equal one of the header's
 * space-separated `v1,<base64>` signatures (two during a secret rotation). Returns the one that matched.
 */
function verifiedSignature(secret: string, headers: http.IncomingHttpHeaders, body: Buffer): string | undefined {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key)
    .update(`${String(headers["webhook-id"])}.${String(headers["webhook-timestamp"])}.`)
    .update(body)
    .digest();
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .find((candidate) => {
      const comma = candidate.indexOf(",");
      const given = Buffer.from(candidate.slice(comma + 1), "base64");
      return candidate.slice(0, comma) === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * A callback receiver on 127.0.0.1: OPTIONS answers 204 with `Allow: POST` (what the gateway checks
 * before it accepts the callback); a POST whose signature verifies answers 204, any other 401, so the
 * gateway retries it as it would at a real receiver that refused it.
 */
async function startReceiver(port: number, secret: string, onNotification: (notification: Notification) => void) {
  const server = http.createServer((req, res) => {
    if (req.method === "OPTIONS") return void res.writeHead(204, { allow: "POST" }).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const verifiedBy = verifiedSignature(secret, req.headers, body);
      res.writeHead(verifiedBy === undefined ? 401 : 204).end();
      const webhookId = String(req.headers["webhook-id"]);
      onNotification({ path: req.url ?? "/", body: body.toString("utf8"), webhookId, verifiedBy });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Prints a step: its name in a column, then what happened. */
function say(step: string, text: string): void {
  console.log(`${step.padEnd(14)}${text}`);
}

const shorten = (text: string) => (text.length > 24 ? `${text.slice(0, 20)}…` : text);

/** A new AWB for each run (prefix 020, a random serial and its check digit), so no step meets an earlier run's data. */
function newAwb(): string {
  const first7 = randomInt(1_000_000, 10_000_000);
  return `020-${first7}${first7 % 7}`;
}

/** Collects values and lets a step wait for `count` of them; `fail` ends every wait at once. */
function collector<T>(what: string) {
  const items: T[] = [];
  const waiters: Array<{ count: number; resolve: () => void; reject: (error: Error) => void }> = [];
  let failure: Error | undefined;
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (failure !== undefined) waiter.reject(failure);
      else if (items.length >= waiter.count) waiter.resolve();
      else continue;
      waiters.splice(waiters.indexOf(waiter), 1);
    }
  };
  return {
    items,
    add(item: T) {
      items.push(item);
      settle();
    },
    fail(error: Error) {
      failure ??= error;
      settle();
    },
    async waitFor(count: number): Promise<T[]> {
      let timer: NodeJS.Timeout | undefined;
      try {
        await new Promise<void>((resolve, reject) => {
          waiters.push({ count, resolve, reject });
          timer = setTimeout(
            () => reject(new StepFailed(`${items.length} of ${count} ${what} within ${STEP_TIMEOUT_MS / 1000} s`)),
            STEP_TIMEOUT_MS,
          );
          settle();
        });
      } finally {
        clearTimeout(timer);
      }
      return items.slice(0, count);
    },
  };
}

interface Settings {
  gateway: string;
  key: string;
  secret: string;
}

/** A request to the gateway; a status other than `expected` fails the step with the answer's detail. */
async function call(
  settings: Settings,
  step: string,
  method: string,
  route: string,
  expected: number,
  init: { body?: string; type?: string; accept?: string; redirect?: "follow" | "manual" } = {},
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${settings.key}` };
  if (init.type !== undefined) headers["content-type"] = init.type;
  if (init.accept !== undefined) headers.accept = init.accept;
  let response: Response;
  try {
    const url = route.startsWith("http") ? route : `${settings.gateway}${route}`;
    response = await fetch(url, { method, headers, body: init.body, redirect: init.redirect ?? "follow" });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    throw new StepFailed(`${step}: cannot reach the gateway at ${settings.gateway} (${cause}): is it running?`);
  }
  if (response.status !== expected) {
    const text = await response.text();
    let hint = "";
    if (response.status === 401) hint = " (is KEY the gateway's API key?)";
    if (text.includes("address is not allowed")) hint = " (start the gateway with ALLOW_PRIVATE_CALLBACKS=true)";
    throw new StepFailed(`${step}: ${method} ${route} answered ${response.status}, not ${expected}${hint}: ${text}`);
  }
  return response;
}

/** The ONE Record collection's items: none, the item itself for one, an array for more. */
function itemsOf(collection: Record<string, unknown>): Array<Record<string, unknown>> {
  const items = collection["api:hasItem"];
  if (items === undefined) return [];
  return (Array.isArray(items) ? items : [items]) as Array<Record<string, unknown>>;
}

const codeOf = (event: Record<string, unknown>) =>
  String((event["cargo:eventCode"] as { "@id"?: string } | undefined)?.["@id"] ?? "").replace(/^.*#/, "");

interface LiveEvent {
  sequence: string;
  state: string;
  station: string | null;
  flight: string | null;
}

/**
 * Subscribes to the AWB over the GraphQL websocket from its start (`after: "0"`): what is stored before
 * the subscription is in place is replayed, then it continues live, without a gap.
 */
function watchLive(settings: Settings, awb: string) {
  const live = collector<LiveEvent>("live events");
  const url = `${settings.gateway.replace(/^http/, "ws")}/graphql`;
  const ws = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${settings.key}` },
    retryAttempts: 0,
  });
  ws.subscribe<{ awbStatusChanged: LiveEvent }>(
    {
      query: `subscription ($awb: String!) { awbStatusChanged(awb: $awb, after: "0") { sequence state station flight } }`,
      variables: { awb },
    },
    {
      next: ({ data, errors }) =>
        data ? live.add(data.awbStatusChanged) : live.fail(new StepFailed(`live: ${JSON.stringify(errors)}`)),
      error: (error) => {
        const close = error as { code?: number; reason?: string };
        live.fail(new StepFailed(`live: the websocket closed (${close.code ?? ""} ${close.reason ?? String(error)})`));
      },
      complete: () => live.fail(new StepFailed("live: the subscription completed before its events came")),
    },
  );
  say("live", `GraphQL websocket ${url}: awbStatusChanged(awb: "${awb}")`);
  return { waitFor: (count: number) => live.waitFor(count), dispose: () => ws.dispose() };
}

/** The AWB as a ONE Record partner reads it: its Waybill (found by AWB), then its Shipment's events. */
async function readThroughOneRecord(settings: Settings, awb: string): Promise<void> {
  const byAwb = `/onerecord/logistics-objects/awb-${awb}`;
  const redirect = await call(settings, "ONE Record", "GET", byAwb, 307, { redirect: "manual" });
  const waybillUrl = redirect.headers.get("location")!;
  const waybill = (await (
    await call(settings, "ONE Record", "GET", waybillUrl, 200, { accept: "application/ld+json" })
  ).json()) as Record<string, unknown>;
  const shipmentUrl = (waybill["cargo:shipment"] as { "@id": string })["@id"];
  say("ONE Record", `GET ${byAwb} → 307 → ${String(waybill["@type"])} ${waybillUrl}`);
  const collection = (await (
    await call(settings, "ONE Record", "GET", `${shipmentUrl}/logistics-events`, 200, {
      accept: "application/ld+json",
    })
  ).json()) as Record<string, unknown>;
  const codes = itemsOf(collection).map(codeOf);
  const events = `${new URL(shipmentUrl).pathname}/logistics-events`;
  say("", `GET ${events} → ${codes.length} StatusUpdateEvents: ${codes.join(", ")}`);
  if (codes.join(",") !== "RCS,DEP")
    throw new StepFailed(`ONE Record: the Shipment's events are ${codes.join(",")}, not RCS,DEP`);
}

async function walk(settings: Settings): Promise<void> {
  const awb = newAwb();
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    const ready = (await (await call(settings, "gateway", "GET", "/readyz", 200)).json()) as { databaseKind: string };
    say("gateway", `${settings.gateway} is ready (${ready.databaseKind} database); this run's AWB is ${awb}`);

    const notifications = collector<Notification>("notifications");
    const seen = new Set<string>(); // delivery is at least once: a notification may come twice
    const receiver = await startReceiver(0, settings.secret, (notification) => {
      if (notification.verifiedBy !== undefined) {
        if (seen.has(notification.webhookId)) return;
        seen.add(notification.webhookId);
        return notifications.add(notification);
      }
      notifications.fail(
        new StepFailed(
          `notification ${notification.webhookId}: its signature does not verify with SIGNING_SECRET (answered 401)`,
        ),
      );
    });
    cleanups.push(() => receiver.close());
    say("receiver", `${receiver.url}/hook answers OPTIONS with Allow: POST and checks each POST's signature`);

    const live = watchLive(settings, awb);
    cleanups.push(() => live.dispose());
    const subscribe = "/carrier/handling/shipment/subscribe";
    const subscription = (await (
      await call(settings, "subscribe", "POST", subscribe, 201, {
        type: "application/json",
        body: JSON.stringify({ awb, callback: `${receiver.url}/hook`, states: "*" }),
      })
    ).json()) as { subscriptionId: string; States: string };
    cleanups.push(async () => {
      await call(settings, "unsubscribe", "DELETE", `${subscribe}/${subscription.subscriptionId}`, 204);
      say("unsubscribe", `DELETE ${subscribe}/${shorten(subscription.subscriptionId)} → 204`);
    });
    say(
      "subscribe",
      `POST ${subscribe} → 201, subscription ${subscription.subscriptionId}, states ${subscription.States}`,
    );

    const events = "/carrier/handling/shipment/events";
    const json = (await (
      await call(settings, "ingest JSON", "POST", events, 202, {
        type: "application/json",
        body: JSON.stringify({ eventId: `demo-${awb}-rcs`, awb, state: "RCS", station: "FRA" }),
      })
    ).json()) as { events: Array<{ matchedSubscriptions: number }> };
    say(
      "ingest JSON",
      `POST ${events} (application/json) RCS at FRA → 202, ${json.events[0]?.matchedSubscriptions} subscription notified`,
    );

    const fsu = readFileSync(FSU_EXAMPLE, "utf8").replace(FSU_EXAMPLE_AWB, awb);
    const fsuAnswer = (await (
      await call(settings, "ingest FSU", "POST", events, 202, { type: "text/plain", body: fsu })
    ).json()) as { events: Array<{ clientEventId: string }> };
    say(
      "ingest FSU",
      `POST ${events} (text/plain) ${fsu.trim().split("\n").pop()} → 202, ${fsuAnswer.events[0]?.clientEventId}`,
    );

    for (const notification of await notifications.waitFor(2)) {
      const { State } = JSON.parse(notification.body) as { State: string };
      say("notification", `${State} POST ${notification.path}, webhook-id ${notification.webhookId}`);
      say("", `signature ${notification.verifiedBy} verified with SIGNING_SECRET`);
    }

    for (const event of await live.waitFor(2))
      say(
        "live event",
        `#${event.sequence} ${event.state} at ${event.station ?? "?"}${event.flight ? ` on ${event.flight}` : ""}`,
      );

    await readThroughOneRecord(settings, awb);
  } catch (error) {
    // What the run left behind goes either way; the step that failed is the one to report.
    for (const cleanup of cleanups.reverse())
      await Promise.resolve()
        .then(cleanup)
        .catch(() => {});
    throw error;
  }
  for (const cleanup of cleanups.reverse()) await cleanup();
}

async function receiveOnly(port: number, secret: string): Promise<void> {
  const receiver = await startReceiver(port, secret, (notification) => {
    let body: { AWB?: string; State?: string } = {};
    try {
      body = JSON.parse(notification.body) as typeof body;
    } catch {
      // printed as it is below
    }
    const { AWB = "?", State = notification.body.slice(0, 40) } = body;
    const verdict =
      notification.verifiedBy === undefined ? "NOT verified (answered 401)" : `${notification.verifiedBy} verified`;
    say("notification", `${State} ${AWB} POST ${notification.path}, signature ${verdict}`);
  });
  say(
    "receiver",
    `${receiver.url}/ answers OPTIONS with Allow: POST and checks each POST's signature; Ctrl-C stops it`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await receiver.close();
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        gateway: { type: "string" },
        key: { type: "string" },
        secret: { type: "string" },
        receive: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    console.error(`demo: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const gateway = (values.gateway ?? process.env.GATEWAY ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  const key = values.key ?? process.env.KEY;
  const secret = values.secret ?? process.env.SIGNING_SECRET;
  const missing = [
    ...(values.receive === undefined && !key ? ["KEY (the API key the gateway's first start printed)"] : []),
    ...(!secret ? ["SIGNING_SECRET (the signing secret the gateway's first start printed)"] : []),
  ];
  if (missing.length > 0) {
    console.error(`demo: set ${missing.join(" and ")}\n${USAGE}`);
    return 2;
  }
  if (values.receive !== undefined) {
    const port = Number(values.receive);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      console.error(`demo: --receive takes a port number, not "${values.receive}"`);
      return 2;
    }
    await receiveOnly(port, secret!);
    return 0;
  }
  try {
    await walk({ gateway, key: key!, secret: secret! });
  } catch (error) {
    console.error(`FAILED  ${error instanceof StepFailed ? error.message : String(error)}`);
    return 1;
  }
  console.log("done: every step passed");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
