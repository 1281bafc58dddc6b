import { randomUUID } from "node:crypto";
import { connect, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from "amqplib";
import type { Logger } from "pino";
import { isDatabaseUnavailable, sqlStateOf } from "../db/availability";
import { AppError } from "../errors";
import type { CarrierStatusRow } from "../milestones/carrier-status.store";
import type { MilestoneInput } from "../milestones/milestone.validate";
import type { MessageContents } from "./carrier-ingest";
import { type BrokerMessageProperties, messageIdentityOf } from "./broker-message";
import type { BrokerMetrics } from "./broker.metrics";

/** "consuming": connected, the queue consumed; "reconnecting": not (yet) connected, trying with backoff. */
export type BrokerStatus = "consuming" | "reconnecting";

export interface BrokerConsumerOptions {
  /** amqp://user:password@host:port/vhost (never logged: it holds the password). */
  url: string;
  queue: string;
  deadLetterQueue: string;
  /** Unacknowledged messages the broker hands this instance at once. */
  prefetch: number;
  /** A message's milestones and statuses; throws an AppError for one that cannot be read (broker-message.ts). */
  read: (
    contentType: string | undefined,
    body: Buffer,
    receivedAt: Date,
    properties: BrokerMessageProperties,
  ) => MessageContents;
  /** Stores milestones and statuses in one transaction; resolves after the commit (milestone.service.ts). */
  ingest: (
    events: MilestoneInput[],
    receivedAt: Date,
    statuses: CarrierStatusRow[],
  ) => Promise<ReadonlyArray<{ duplicate: boolean }>>;
  metrics: BrokerMetrics;
  log: Logger;
  /** Delay before the first reconnection attempt, doubled at each failure up to `maxMs`. */
  reconnect?: { initialMs: number; maxMs: number };
  /** Wait before a message whose ingestion failed goes back to the queue, doubled up to `maxMs`. */
  retry?: { initialMs: number; maxMs: number };
  /**
   * Attempts at storing a message that fails on its own for a reason of its own (not the database's
   * availability or resources, not a refusal of its data), after which it is dead-lettered. Default 5.
   */
  maxAttempts?: number;
}

export interface BrokerConsumer {
  status(): BrokerStatus;
  /** Settles when the first connection attempt has (it never rejects: a failure is retried). */
  readonly started: Promise<void>;
  /** Stops consuming, waits for messages in flight to be acked or handed back, closes channel and connection. */
  close(): Promise<void>;
}

/** Milestones stored in one transaction at most: a batch stops taking messages once it has this many. */
const MAX_BATCH_EVENTS = 1_000;
/** Carrier statuses recorded in one transaction at most (one message may hold 10,000: it goes alone). */
const MAX_BATCH_STATUSES = 10_000;
/** A dead-letter's problem list is cut to this many characters (AMQP header tables hold 64 KiB in all). */
const MAX_ERRORS_HEADER_CHARS = 16_384;
/** Messages whose failed attempts are remembered at most (the oldest forgotten first). */
const MAX_TRACKED_MESSAGES = 10_000;
/** Codes the reading of a message throws (broker-message.ts): such a message is dead-lettered. */
const UNREADABLE = new Set(["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"]);

/** A read message waiting for its batch, and how to say it is settled (acked or handed back). */
interface Pending {
  message: ConsumeMessage;
  events: MilestoneInput[];
  statuses: CarrierStatusRow[];
  receivedAt: Date;
  settled: () => void;
}

/** One connection and its channel: a loss ends it, and a new session is opened. */
interface Session {
  connection: ChannelModel;
  channel: ConfirmChannel;
  consumerTag: string | undefined;
  alive: boolean;
  batch: Pending[];
  flushing: boolean;
  /** Dead letters the broker returned as unroutable (their x-dead-letter-id): not kept, so not acked. */
  returned: Set<string>;
}

/**
 * Consumes the milestone queue (several instances may consume the same queue: the broker shares its
 * messages among them). Each message is read by its content type; readable ones are stored in
 * batches — the messages that arrived while the previous batch was being stored, in queue order —
 * and acknowledged only after the batch's commit. An unreadable message is published to the
 * dead-letter queue (confirmed by the broker) with the reason in its headers, then acknowledged. A
 * message whose ingestion fails (database down) is handed back to the queue after a backoff, never
 * dead-lettered; one that fails alone for a reason of its own is tried `maxAttempts` times, then
 * dead-lettered with the reason. A lost connection is re-opened with a bounded, doubling backoff;
 * what was not yet acknowledged is redelivered by the broker, and stores nothing twice (event ids
 * are idempotent).
 */
export function startBrokerConsumer(options: BrokerConsumerOptions): BrokerConsumer {
  const { url, queue, deadLetterQueue, prefetch, read, ingest, metrics, log } = options;
  const reconnect = options.reconnect ?? { initialMs: 500, maxMs: 30_000 };
  const retry = options.retry ?? { initialMs: 1_000, maxMs: 30_000 };
  const maxAttempts = options.maxAttempts ?? 5;
  const where = brokerAddress(url);

  let status: BrokerStatus = "reconnecting";
  let stopped = false;
  let session: Session | undefined;
  let connecting: Promise<void> | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let reconnectAttempts = 0;
  let failedIngestions = 0;
  /**
   * Failed attempts per message identity (broker-message.ts), of messages failing alone for a reason of
   * their own. Kept in this process: a classic queue counts no deliveries, and the `redelivered` flag
   * only says "at least once". With several instances a message may be tried up to `maxAttempts` times
   * on each before one of them dead-letters it; a restart starts the count again.
   */
  const attempts = new Map<string, number>();
  /** Every message received and not yet settled, so a close can wait for it. */
  const inFlight = new Set<Promise<void>>();
  /** Backoffs in progress, cut short by a close (their messages are then handed back at once). */
  const waits = new Set<() => void>();

  const track = (): (() => void) => {
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
    return settle;
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        waits.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      waits.add(end);
    });

  /** Ack or nack on a channel that may have closed since: then the broker redelivers the message itself. */
  const settleOn = (s: Session, message: ConsumeMessage, ack: boolean) => {
    if (!s.alive) return;
    try {
      if (ack) s.channel.ack(message);
      else s.channel.nack(message, false, true);
    } catch (error) {
      log.debug({ err: error }, "broker channel closed before a message was settled; the broker redelivers it");
    }
  };

  /**
   * Publishes the message to the dead-letter queue with the reason (and the attempts made, when
   * storing it was tried more than once), confirmed; answers the reason.
   */
  async function deadLetter(s: Session, message: ConsumeMessage, error: unknown, tried?: number): Promise<string> {
    const { reason, errors } = rejectionOf(error);
    const props = message.properties;
    const headers: Record<string, unknown> = {
      ...(props.headers ?? {}),
      "x-rejection-reason": reason,
      "x-rejection-errors": errorsHeader(errors),
      "x-rejected-from": queue,
      "x-rejected-at": new Date().toISOString(),
      ...(tried === undefined ? {} : { "x-rejection-attempts": tried }),
    };
    // Declared again first, so a dead-letter queue deleted by mistake comes back; published mandatory,
    // so one deleted in between returns the message instead of the broker confirming and dropping it.
    await s.channel.assertQueue(deadLetterQueue, { durable: true });
    const id = randomUUID();
    headers["x-dead-letter-id"] = id;
    await new Promise<void>((resolve, reject) => {
      s.channel.sendToQueue(
        deadLetterQueue,
        message.content,
        {
          persistent: true,
          mandatory: true,
          headers,
          // The original properties, so the message can be published again as it was once mended.
          ...definedOnly({
            contentType: props.contentType as string | undefined,
            contentEncoding: props.contentEncoding as string | undefined,
            messageId: props.messageId as string | undefined,
            correlationId: props.correlationId as string | undefined,
            timestamp: props.timestamp as number | undefined,
            type: props.type as string | undefined,
            appId: props.appId as string | undefined,
          }),
        },
        (failure) => {
          if (failure) reject(failure instanceof Error ? failure : new Error(String(failure)));
          else if (s.returned.delete(id)) reject(new Error(`the dead-letter queue ${deadLetterQueue} is gone`));
          else resolve();
        },
      );
    });
    return reason;
  }

  /** A message as it arrives: unreadable ones are dead-lettered, the others join the next batch. */
  async function receive(s: Session, message: ConsumeMessage) {
    const settled = track();
    const receivedAt = new Date();
    let contents: MessageContents;
    try {
      const props = message.properties;
      contents = read(props.contentType as string | undefined, message.content, receivedAt, {
        messageId: props.messageId as string | undefined,
        timestamp: props.timestamp as number | undefined,
      });
    } catch (error) {
      if (!(error instanceof AppError && UNREADABLE.has(error.code)))
        // The parsers throw only rejections (a property test holds them to it); anything else is a bug,
        // and the message is kept in the dead-letter queue rather than retried for ever.
        log.error({ err: error }, "reading a broker message failed unexpectedly; dead-lettering it");
      try {
        const reason = await deadLetter(s, message, error);
        settleOn(s, message, true);
        metrics.record("dead_lettered");
        log.warn({ reason, queue: deadLetterQueue }, "broker message dead-lettered");
      } catch (failure) {
        // Not confirmed by the broker: it stays in the queue (handed back, or redelivered after a loss).
        log.warn({ err: failure }, "dead-lettering a broker message failed; handing it back");
        await pause(retry.initialMs);
        settleOn(s, message, false);
      }
      settled();
      return;
    }
    if (contents.events.length === 0 && contents.statuses.length === 0) {
      settleOn(s, message, true);
      metrics.record("unmapped");
      settled();
      return;
    }
    s.batch.push({ message, ...contents, receivedAt, settled });
    void flush(s);
  }

  /** Stores the session's waiting messages, one batch at a time (so commits follow queue order). */
  async function flush(s: Session) {
    if (s.flushing) return;
    s.flushing = true;
    try {
      while (s.batch.length > 0) {
        if (!s.alive) {
          // Their channel is gone: the broker redelivers them; storing them now would be wasted work.
          for (const pending of s.batch.splice(0)) pending.settled();
          return;
        }
        let events = 0;
        let statuses = 0;
        let taken = 0;
        for (const next of s.batch) {
          const fits =
            events + next.events.length <= MAX_BATCH_EVENTS && statuses + next.statuses.length <= MAX_BATCH_STATUSES;
          if (taken > 0 && !fits) break;
          events += next.events.length;
          statuses += next.statuses.length;
          taken++;
        }
        await store(s, s.batch.splice(0, taken));
      }
    } finally {
      s.flushing = false;
    }
  }

  async function store(s: Session, batch: Pending[]): Promise<void> {
    // The latest arrival: no event of the batch was received after it.
    const receivedAt = batch[batch.length - 1]!.receivedAt;
    try {
      const results = await ingest(
        batch.flatMap((p) => p.events),
        receivedAt,
        batch.flatMap((p) => p.statuses),
      );
      failedIngestions = 0;
      // A message tried before comes back marked redelivered: only those can have a count to forget.
      if (attempts.size > 0)
        for (const pending of batch)
          if (pending.message.fields.redelivered) attempts.delete(identityOf(pending.message));
      let at = 0;
      for (const pending of batch) {
        const mine = results.slice(at, (at += pending.events.length));
        settleOn(s, pending.message, true); // after the commit, never before
        // A message of statuses that are no milestones (FOH, customs codes…) is recorded in the history only.
        const outcome =
          pending.events.length === 0 ? "unmapped" : mine.every((r) => r.duplicate) ? "duplicate" : "stored";
        metrics.record(outcome);
        pending.settled();
      }
    } catch (error) {
      if (batch.length > 1 && !isDatabaseUnavailable(error)) {
        // Not the database: perhaps one message's events; alone, the others can still be stored.
        for (const pending of batch) await store(s, [pending]);
        return;
      }
      if (batch.length === 1 && refusedByTheDatabase(error)) {
        // A value the database will never take (a NUL in a text, say): handed back, the message would
        // come back for ever and hold back those behind it, so it goes to the dead-letter queue.
        const [pending] = batch as [Pending];
        try {
          await deadLetter(s, pending.message, error);
          settleOn(s, pending.message, true);
          metrics.record("dead_lettered");
          log.error({ err: error, queue: deadLetterQueue }, "a broker message could not be stored; dead-lettered");
        } catch (failure) {
          log.warn({ err: failure }, "dead-lettering a broker message failed; handing it back");
          settleOn(s, pending.message, false);
        }
        pending.settled();
        return;
      }
      if (batch.length === 1 && !theDatabasesOwn(error)) {
        // Failing alone, not for the database's sake: perhaps for ever (a fault nobody foresaw). Tried
        // a bounded number of times (each after the pause below), then dead-lettered with the reason.
        const [pending] = batch as [Pending];
        const id = identityOf(pending.message);
        const tried = (attempts.get(id) ?? 0) + 1;
        attempts.delete(id); // re-inserted last: the map's order is the eviction order
        if (tried >= maxAttempts) {
          try {
            await deadLetter(s, pending.message, error, tried);
            settleOn(s, pending.message, true);
            metrics.record("dead_lettered");
            log.error(
              { err: error, queue: deadLetterQueue, attempts: tried },
              "a broker message failed every attempt to store it; dead-lettered",
            );
            pending.settled();
            return;
          } catch (failure) {
            log.warn({ err: failure }, "dead-lettering a broker message failed; handing it back");
          }
        }
        attempts.set(id, tried);
        if (attempts.size > MAX_TRACKED_MESSAGES) attempts.delete(attempts.keys().next().value!);
      }
      failedIngestions++;
      const wait = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.min(failedIngestions - 1, 20));
      log.error(
        { err: error, messages: batch.length, retryInMs: wait },
        "storing broker messages failed; handing them back to the queue after a pause",
      );
      metrics.record("failed", batch.length);
      await pause(wait); // so a database that is down is not asked again at once, in a loop
      for (const pending of batch) {
        settleOn(s, pending.message, false);
        pending.settled();
      }
    }
  }

  function lost(s: Session, reason: string, error?: unknown) {
    if (!s.alive) return;
    s.alive = false;
    if (session === s) session = undefined;
    status = "reconnecting";
    metrics.consuming(false);
    if (stopped) return;
    log.warn({ err: error, broker: where, reason }, "broker connection lost; reconnecting");
    void s.connection.close().catch(() => {}); // a channel lost alone leaves its connection open
    scheduleReconnect();
  }

  function scheduleReconnect() {
    if (stopped || reconnectTimer) return;
    const base = Math.min(reconnect.maxMs, reconnect.initialMs * 2 ** Math.min(reconnectAttempts, 20));
    const delay = Math.round(base * (0.8 + Math.random() * 0.2)); // instances restarted together spread out
    reconnectAttempts++;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void open();
    }, delay);
  }

  function open(): Promise<void> {
    connecting ??= openSession()
      .catch((error: unknown) => {
        log.warn(
          { err: error, broker: where, attempt: reconnectAttempts + 1 },
          "connecting to the broker failed; trying again",
        );
        scheduleReconnect();
      })
      .finally(() => (connecting = undefined));
    return connecting;
  }

  async function openSession(): Promise<void> {
    const connection = await connect(url, {
      timeout: 10_000,
      clientProperties: { connection_name: `cargo-gateway pid ${process.pid}` },
    });
    const s: Session = {
      connection,
      channel: undefined as unknown as ConfirmChannel,
      consumerTag: undefined,
      alive: true,
      batch: [],
      flushing: false,
      returned: new Set(),
    };
    // Without listeners an 'error' event would end the process; the 'close' that follows reconnects.
    connection.on("error", (error: Error) => log.debug({ err: error }, "broker connection error"));
    connection.on("close", (error?: Error) => lost(s, "connection closed", error));
    try {
      if (stopped) throw new Error("stopped");
      s.channel = await connection.createConfirmChannel();
      s.channel.on("error", (error: Error) => log.debug({ err: error }, "broker channel error"));
      s.channel.on("close", () => lost(s, "channel closed"));
      // A mandatory publish nobody routes comes back here, before its confirm (AMQP 0-9-1).
      s.channel.on("return", (returned: ConsumeMessage) => {
        const id = returned.properties.headers?.["x-dead-letter-id"] as unknown;
        if (typeof id === "string") s.returned.add(id);
      });
      await s.channel.assertQueue(queue, { durable: true });
      await s.channel.assertQueue(deadLetterQueue, { durable: true });
      await s.channel.prefetch(prefetch);
      const { consumerTag } = await s.channel.consume(queue, (message) => {
        // null: the broker cancelled the consumer (the queue was deleted): start over, declaring it again.
        if (message === null) lost(s, "consumer cancelled by the broker");
        else void receive(s, message);
      });
      s.consumerTag = consumerTag;
      if (stopped) throw new Error("stopped");
    } catch (error) {
      s.alive = false;
      await connection.close().catch(() => {});
      if (stopped) return;
      throw error;
    }
    session = s;
    status = "consuming";
    metrics.consuming(true);
    reconnectAttempts = 0;
    log.info({ broker: where, queue, deadLetterQueue, prefetch }, "consuming the broker queue");
  }

  const started = open();

  return {
    status: () => status,
    started,
    async close() {
      if (stopped) return;
      stopped = true;
      clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      await connecting;
      const s = session;
      // No new deliveries; those already received are still stored and acknowledged.
      if (s?.consumerTag !== undefined) await s.channel.cancel(s.consumerTag).catch(() => {});
      for (const end of [...waits]) end(); // a message waiting out a backoff is handed back now
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      if (s) {
        s.alive = false;
        await s.channel.close().catch(() => {});
        await s.connection.close().catch(() => {});
      }
      session = undefined;
      status = "reconnecting";
      metrics.consuming(false);
    },
  };
}

/** A message's identity, as the attempts are counted by (broker-message.ts). */
function identityOf(message: ConsumeMessage): string {
  const props = message.properties;
  return messageIdentityOf(
    { messageId: props.messageId as string | undefined, timestamp: props.timestamp as number | undefined },
    message.content,
  );
}

/**
 * A failure that says nothing of the message: the database unavailable (db/availability.ts), out of
 * resources (SQLSTATE class 53: disk full, out of memory, too many connections) or failing itself
 * (class 58: an I/O error). Every message would fail the same way; none is counted against.
 */
function theDatabasesOwn(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  const state = sqlStateOf(error);
  return state !== undefined && (state.startsWith("53") || state.startsWith("58"));
}

/**
 * The database refused the data itself: SQLSTATE class 22 (data exception, such as a NUL character
 * in a text) or 23 (integrity constraint). Storing the same message again would fail the same way;
 * anything else (the database unavailable, a timeout) may pass later and is retried.
 */
function refusedByTheDatabase(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== undefined && (state.startsWith("22") || state.startsWith("23"));
}

/** The reason and problems of a message that is dead-lettered, for its headers. */
function rejectionOf(error: unknown): { reason: string; errors: ReadonlyArray<{ field: string; message: string }> } {
  if (error instanceof AppError) return { reason: `${error.code}: ${error.message}`, errors: error.errors ?? [] };
  // In one line, as the header's readers expect (Prisma's messages span several).
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  return { reason: `INTERNAL: ${message}`.slice(0, 1_000), errors: [] };
}

/** The problems as JSON, as many whole ones as fit in MAX_ERRORS_HEADER_CHARS. */
function errorsHeader(errors: ReadonlyArray<{ field: string; message: string }>): string {
  let kept = errors.length;
  let text = JSON.stringify(errors);
  while (text.length > MAX_ERRORS_HEADER_CHARS && kept > 0) text = JSON.stringify(errors.slice(0, (kept >>= 1)));
  return text;
}

function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

/** host:port/vhost of an AMQP URL, for the log (its credentials left out). */
function brokerAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === "amqps:" ? "5671" : "5672")}${parsed.pathname || "/"}`;
  } catch {
    return "(unparsable URL)";
  }
}
