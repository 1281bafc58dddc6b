// The delivery peer of bench:peers, as its own process: a graphile-worker runner on PostgreSQL whose one
// task signs a notification body as the gateway signs it and POSTs it to the job's callback, throwing on
// a non-2xx answer so graphile-worker retries it (at least once, like the gateway's outbox).
// Environment: DATABASE_URL, CONCURRENCY (jobs in flight), SIGNING_SECRET, and GRAPHILE_TUNING:
// "default" (graphile-worker's defaults) or "batched" (its documented throughput options: a local
// queue of jobs fetched in batches and completions written in batches after a short linger).
// Graphile-worker logs through its default (console) logger at info, as the gateway logs at info; its
// line per successful job is off (NO_LOG_SUCCESS, set by the caller): the gateway logs no line per
// delivery either.
import { run, type Task } from "graphile-worker";
import { Agent, request } from "undici";
import { signWebhook } from "../../../src/delivery/notification";

/** A job's payload: the notification as the gateway would queue it. */
export interface DeliverPayload {
  id: string;
  url: string;
  body: string;
}

const USER_AGENT = "graphile-worker peer (webhook delivery)";
/** The linger before a batch of completions is written: the gateway's worker lingers as long before recording outcomes. */
const COMPLETE_BATCH_LINGER_MS = 20;

async function main(): Promise<void> {
  const concurrency = Number(process.env.CONCURRENCY ?? 8);
  const secret = process.env.SIGNING_SECRET!;
  const dispatcher = new Agent({ connections: concurrency });
  const deliver: Task = async (payload) => {
    const { id, url, body } = payload as DeliverPayload;
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await request(url, {
      method: "POST",
      dispatcher,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(secret, id, timestamp, body),
      },
    });
    await response.body.dump();
    if (response.statusCode >= 300) throw new Error(`HTTP ${response.statusCode}`);
  };
  const batched =
    process.env.GRAPHILE_TUNING === "batched"
      ? {
          preset: {
            worker: { localQueue: { size: 10 * concurrency }, completeJobBatchDelay: COMPLETE_BATCH_LINGER_MS },
          },
        }
      : {};
  const runner = await run({
    connectionString: process.env.DATABASE_URL!,
    concurrency,
    taskList: { deliver },
    ...batched,
  });
  console.log(JSON.stringify({ msg: "graphile worker running" }));
  await runner.promise;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
