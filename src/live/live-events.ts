import { setMaxListeners } from "node:events";
import Redis from "ioredis";
import type { Logger } from "pino";
import type { MilestoneView } from "../milestones/milestone.view";
import { disconnectRedis } from "../redis";

/** A milestone as live subscribers receive it: the same view REST shows (plain JSON, so it crosses Redis unchanged). */
export type LiveMilestone = MilestoneView;

export interface LiveEvents {
  /** "up"/"down" with REDIS_URL (down: fanning out within this instance only), else "not used". */
  redisStatus(): "up" | "down" | "not used";
  /**
   * Listens for milestone batches; returns the function that stops listening. The listener runs
   * synchronously on publish, so a subscriber controls its own buffering (and can detect that it lags).
   */
  listen(listener: (events: LiveMilestone[]) => void): () => void;
  /**
   * Called when Redis counts as up again after this instance saw it down (its publisher or subscriber
   * connection dropped, or its SUBSCRIBE failed), once the subscription is live: what was published
   * meanwhile may not have come here (subscribers resync from the database). A publish lost on
   * another instance's side is not noticed here. Returns the function that stops listening.
   */
  onReconnect(listener: () => void): () => void;
  /**
   * Called when an instance (this one included) announces the heads of AWBs whose events it could
   * not publish through Redis while its publisher was down: each AWB's latest position then, or
   * "all" when there were more than it keeps. Subscribers elsewhere read what they missed from the
   * database. Returns the function that stops listening.
   */
  onHeads(listener: (heads: AnnouncedHeads) => void): () => void;
  /** Publishes stored milestones; never throws (live fan-out must not fail an ingestion). */
  publish(events: LiveMilestone[]): void;
  close(): Promise<void>;
}

/** Positions an instance announces after its publisher was down: per AWB its latest, or every AWB. */
export type AnnouncedHeads = ReadonlyMap<string, number> | "all";

/** How many AWBs' heads an instance keeps to announce; past it, it asks for a resync of every AWB. */
const MAX_ANNOUNCED_AWBS = 10_000;

/**
 * The fan-out of live events: inside this process by default; with REDIS_URL, through Redis pub/sub
 * so an event published on one instance reaches subscribers on every instance. Redis keeps nothing:
 * what must not be lost goes through the database first (catch-up reads the history).
 *
 * Redis counts as up when the publisher connection is ready and Redis has confirmed the subscriber's
 * SUBSCRIBE on its current connection ("ready" alone comes before the subscription is live again).
 * Own events reach this instance's subscribers once: through Redis's echo while subscribed, directly
 * otherwise (publisher down, or not subscribed). While Redis is down the fan-out is this process's
 * own; across instances it resumes once both are back, and only an instance that saw Redis down
 * resyncs (onReconnect). Publishing never queues while Redis is down: a message queued then and sent
 * after recovery would reach local subscribers a second time, as Redis's echo. Instead the instance
 * remembers the AWBs whose events it served only locally (their latest position; past
 * `maxAnnouncedAwbs`, just that there were too many) and, once its publisher is ready again,
 * announces those heads on a channel of their own, so every other instance's streams read what
 * they missed from the database (onHeads).
 * (Around a reconnect a batch can still arrive twice — directly, and as an echo of a publish that
 * reached a SUBSCRIBE not yet confirmed, or whose reply was lost; the AWB streams drop the repeat by
 * its position.)
 */
export function createLiveEvents({
  redisUrl,
  log,
  maxAnnouncedAwbs = MAX_ANNOUNCED_AWBS,
}: {
  redisUrl: string | undefined;
  log: Logger;
  maxAnnouncedAwbs?: number;
}): LiveEvents {
  const local = new EventTarget();
  // One listener per live subscription: thousands are expected, not a leak.
  setMaxListeners(0, local);
  const dispatch = (events: LiveMilestone[]) =>
    void local.dispatchEvent(new CustomEvent("milestones", { detail: events }));
  const reconnectListeners = new Set<() => void>();
  const headsListeners = new Set<(heads: AnnouncedHeads) => void>();
  const base = {
    listen(listener: (events: LiveMilestone[]) => void) {
      // EventTarget reports a throwing listener as an uncaught exception, which would end the
      // process: one subscriber's failure is logged here instead.
      const handler = (event: Event) => {
        try {
          listener((event as CustomEvent<LiveMilestone[]>).detail);
        } catch (error) {
          log.warn({ err: error }, "a live listener failed");
        }
      };
      local.addEventListener("milestones", handler);
      return () => local.removeEventListener("milestones", handler);
    },
    onReconnect(listener: () => void) {
      reconnectListeners.add(listener);
      return () => void reconnectListeners.delete(listener);
    },
    onHeads(listener: (heads: AnnouncedHeads) => void) {
      headsListeners.add(listener);
      return () => void headsListeners.delete(listener);
    },
  };
  if (!redisUrl) return { ...base, redisStatus: () => "not used", publish: dispatch, close: async () => {} };

  const publisher = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // Subscribed here rather than by ioredis's auto-resubscribe, whose completion is not observable.
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, autoResubscribe: false });
  /** Redis confirmed the SUBSCRIBE on the subscriber's current connection: it hears what is published. */
  let subscribed = false;
  /** Counts the subscriber's connections: a SUBSCRIBE answered on an earlier one says nothing of this one. */
  let connection = 0;
  let resubscribe: NodeJS.Timeout | undefined;
  let closed = false;
  let degraded = false;
  /** AWBs whose events reached this instance's subscribers only, with their latest position; "all" past the bound. */
  let unannounced: Map<string, number> | "all" = new Map();
  const rememberHead = (awb: string, position: number) => {
    if (unannounced === "all") return;
    const known = unannounced.get(awb);
    if (known === undefined && unannounced.size >= maxAnnouncedAwbs) unannounced = "all";
    else if (known === undefined || position > known) unannounced.set(awb, position);
  };
  const remember = (events: readonly LiveMilestone[]) => {
    for (const event of events) rememberHead(event.awb, Number(event.sequence));
  };
  /** Publishes what `remember` kept, once the publisher can; kept again if that publish fails. */
  const announce = () => {
    if (closed || publisher.status !== "ready" || (unannounced !== "all" && unannounced.size === 0)) return;
    const heads = unannounced;
    unannounced = new Map();
    const message = heads === "all" ? { all: true } : { heads: [...heads] };
    publisher.publish(HEADS_CHANNEL, JSON.stringify(message)).then(
      () =>
        log.info({ awbs: heads === "all" ? "all" : heads.size }, "announced live heads missed while redis was down"),
      (error: unknown) => {
        log.warn({ err: error }, "announcing live heads to redis failed; trying again when it is back");
        if (heads === "all") unannounced = "all";
        else for (const [awb, position] of heads) rememberHead(awb, position);
      },
    );
  };
  const healthy = () => publisher.status === "ready" && subscribed;
  // Connecting at start is no outage: said only if Redis is not reached within START_GRACE_MS.
  let connecting = true;
  const startGrace = setTimeout(() => {
    connecting = false;
    if (!closed && !healthy())
      log.warn("redis unavailable: live events fan out within this instance only until it is back");
  }, START_GRACE_MS);
  startGrace.unref();
  const noteHealth = () => {
    const now = healthy();
    if (now && connecting) {
      connecting = false;
      clearTimeout(startGrace);
      degraded = false;
      log.info("redis connected: live events fan out across instances");
      for (const listener of reconnectListeners) listener();
      return;
    }
    if (now === !degraded) return;
    degraded = !now;
    if (connecting) return;
    if (degraded) log.warn("redis unavailable: live events fan out within this instance only until it is back");
    else {
      log.info("redis reachable again: live events fan out across instances");
      for (const listener of reconnectListeners) listener();
    }
  };
  const subscribe = () => {
    const attempt = connection;
    subscriber.subscribe(REDIS_CHANNEL, HEADS_CHANNEL).then(
      () => {
        if (attempt !== connection || subscriber.status !== "ready") return;
        subscribed = true;
        noteHealth();
      },
      (error: unknown) => {
        if (attempt !== connection || closed) return;
        log.warn({ err: error }, "redis subscribe failed; retrying");
        clearTimeout(resubscribe);
        resubscribe = setTimeout(() => {
          if (attempt === connection && subscriber.status === "ready") subscribe();
        }, RESUBSCRIBE_RETRY_MS);
      },
    );
  };
  for (const client of [publisher, subscriber])
    client.on("error", (error: Error) => log.debug({ err: error }, "redis connection error"));
  publisher.on("close", noteHealth);
  publisher.on("ready", () => {
    noteHealth();
    announce();
  });
  subscriber.on("close", () => {
    connection++;
    subscribed = false;
    clearTimeout(resubscribe);
    noteHealth();
  });
  subscriber.on("ready", subscribe);
  subscriber.on("message", (channel: string, message: string) => {
    let parsed: { heads: AnnouncedHeads } | { events: LiveMilestone[] };
    try {
      parsed =
        channel === HEADS_CHANNEL ? { heads: readHeads(message) } : { events: JSON.parse(message) as LiveMilestone[] };
    } catch (error) {
      return log.warn({ err: error, channel }, "dropped a malformed live message from redis");
    }
    if ("events" in parsed) return dispatch(parsed.events);
    for (const listener of headsListeners) {
      try {
        listener(parsed.heads);
      } catch (error) {
        log.warn({ err: error }, "a live heads listener failed");
      }
    }
  });
  return {
    ...base,
    redisStatus: () => (healthy() ? "up" : "down"),
    publish(events) {
      if (publisher.status !== "ready") {
        // Not published, so not echoed either: this instance's subscribers are served directly,
        // other instances' once the heads are announced.
        noteHealth();
        remember(events);
        dispatch(events);
        return;
      }
      // Our own subscriber hears what we publish while subscribed; otherwise local subscribers are
      // served directly (and other instances still through Redis).
      const echoed = subscribed;
      if (!echoed) dispatch(events);
      publisher.publish(REDIS_CHANNEL, JSON.stringify(events)).then(announce, (error: unknown) => {
        log.warn(
          { err: error, events: events.length },
          "publishing live milestones to redis failed; served within this instance",
        );
        remember(events);
        if (echoed) dispatch(events);
      });
    },
    async close() {
      closed = true;
      clearTimeout(startGrace);
      clearTimeout(resubscribe);
      // Resolved once each connection has really ended (its socket closed), not when asked to.
      await Promise.all([publisher, subscriber].map(disconnectRedis));
    },
  };
}

/** How long after a refused SUBSCRIBE (on a connection that stays up) it is sent again. */
const RESUBSCRIBE_RETRY_MS = 1_000;
/** How long a start may take to reach Redis before the fan-out is said to be local only. */
const START_GRACE_MS = 3_000;
const REDIS_CHANNEL = "cgw:milestones";
/** Heads announced after a publisher outage (a channel of its own: older instances do not read it as milestones). */
const HEADS_CHANNEL = "cgw:milestone-heads";

/** An announcement as published by `announce`: `{"heads":[[awb, position], …]}` or `{"all":true}`. */
function readHeads(message: string): AnnouncedHeads {
  const parsed = JSON.parse(message) as { all?: unknown; heads?: unknown };
  if (parsed.all === true) return "all";
  if (!Array.isArray(parsed.heads)) throw new Error("neither heads nor all");
  const heads = new Map<string, number>();
  for (const entry of parsed.heads as unknown[]) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Number.isSafeInteger(entry[1]))
      throw new Error("a head is not [awb, position]");
    heads.set(entry[0], entry[1] as number);
  }
  return heads;
}
