import type { Logger } from "pino";
import type { AnnouncedHeads, LiveEvents, LiveMilestone } from "./live-events";

/** What the streams read from storage: an AWB's head, and its events after a position (oldest first). */
export interface StreamStore {
  heads(awbs: readonly string[]): Promise<Map<string, bigint>>;
  after(awb: string, position: number, limit: number): Promise<LiveMilestone[]>;
  /**
   * The highest position retention has deleted from the AWB's stream (0: none): the holes it leaves
   * are at or below it (retention.store.ts).
   */
  prunedThrough(awb: string): Promise<number>;
}

/**
 * One listener of one AWB. A stream hands its members the AWB's events in position order, each once,
 * starting after the head it had when the member joined (or, for a member that joined before the
 * head was read, after that head).
 */
export interface StreamMember {
  /** Called with the head when it is known, before any event: the member's start unless it set its own. */
  started(head: number): void;
  /** The AWB's next event, in order. */
  next(event: LiveMilestone, position: number): void;
}

/** How long a hole in an AWB's positions may stay open before it is filled from the database. */
const GAP_GRACE_MS = 50;
/** Rows per read when filling a hole. */
const FILL_PAGE = 500;
/** Out-of-order events kept per AWB while a hole is open; past it, all are read again from the database. */
const MAX_WAITING = 10_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;
/**
 * With Redis, how often every stream's head is read again from the database: a publish lost where
 * no announcement follows (an instance that stopped while its publisher was down) is filled within
 * this long rather than at the AWB's next event.
 */
export const HEADS_CHECK_MS = 30_000;

interface Stream {
  readonly awb: string;
  /** Position of the last event handed out; undefined until read from the database. */
  head: number | undefined;
  /** Events that arrived ahead of a hole (or before the head was known), by position. */
  readonly waiting: Map<number, LiveMilestone>;
  /**
   * Events were dropped because `waiting` was full: the next fill must read past the head even if
   * nothing waits (what remains may be contiguous, with the dropped positions after it).
   */
  missed: boolean;
  readonly members: Set<StreamMember>;
  timer: NodeJS.Timeout | undefined;
  filling: boolean;
  retryMs: number;
}

/**
 * The live fan-out, indexed by AWB: an event is looked at only by the listeners of its own AWB, so
 * its cost does not grow with subscribers of other AWBs.
 *
 * Order. Positions are dense per AWB and commit-ordered (milestone.store.ts), but events can reach
 * this process out of order (two commits racing to publish; through Redis, from several instances)
 * or not at all (Redis down). A stream therefore hands out only the next position after its head:
 * an event further ahead waits, and if the hole is still open after GAP_GRACE_MS it is filled from
 * the database — where the missing event must already be, because a position is only taken after
 * every smaller one has committed. Events at or below the head are repeats and are dropped.
 */
export function createAwbStreams({
  live,
  store,
  log,
  headsCheckMs = live.redisStatus() === "not used" ? 0 : HEADS_CHECK_MS,
}: {
  live: Pick<LiveEvents, "listen" | "onReconnect" | "onHeads" | "redisStatus">;
  store: StreamStore;
  log: Logger;
  /** 0: never (the default without Redis, where a publish cannot be lost). */
  headsCheckMs?: number;
}) {
  const streams = new Map<string, Stream>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  /** AWBs whose heads are to be read in the next batch (one query for every stream opened in a tick). */
  let headBatch: Set<string> | undefined;

  const stopListening = live.listen((batch) => {
    for (const event of batch) {
      const stream = streams.get(event.awb);
      if (stream) accept(stream, event, Number(event.sequence));
    }
  });
  const stopResync = live.onReconnect(() => api.resync());
  const stopHeads = live.onHeads((heads) => api.resync(heads));
  const headsCheck = headsCheckMs > 0 ? setInterval(() => api.resync(), headsCheckMs).unref() : undefined;

  function emit(stream: Stream, event: LiveMilestone, position: number): void {
    stream.head = position;
    for (const member of stream.members) {
      try {
        member.next(event, position);
      } catch (error) {
        log.warn({ err: error, awb: stream.awb }, "a live subscriber failed on an event");
      }
    }
  }

  function accept(stream: Stream, event: LiveMilestone, position: number): void {
    if (stream.head === undefined) {
      if (stream.waiting.size < MAX_WAITING) stream.waiting.set(position, event);
      else stream.missed = true; // read from the database once the head is known
      return;
    }
    if (position <= stream.head) return;
    if (position === stream.head + 1) {
      emit(stream, event, position);
      drainWaiting(stream);
      return;
    }
    if (stream.waiting.size >= MAX_WAITING) {
      stream.waiting.clear(); // the fill reads them all again
      stream.missed = true;
    }
    stream.waiting.set(position, event);
    scheduleFill(stream, GAP_GRACE_MS);
  }

  function drainWaiting(stream: Stream): void {
    for (
      let next = stream.waiting.get(stream.head! + 1);
      next !== undefined;
      next = stream.waiting.get(stream.head! + 1)
    ) {
      stream.waiting.delete(stream.head! + 1);
      emit(stream, next, stream.head! + 1);
    }
    for (const position of stream.waiting.keys()) if (position <= stream.head!) stream.waiting.delete(position);
    // Dropped events are already in the database (published after their commit): no grace needed.
    if (stream.missed) scheduleFill(stream, 0);
    else if (stream.waiting.size > 0) scheduleFill(stream, GAP_GRACE_MS);
    else if (stream.timer && !stream.filling) {
      clearTimeout(stream.timer);
      stream.timer = undefined;
    }
  }

  function scheduleFill(stream: Stream, delayMs: number): void {
    if (stream.timer || stream.filling) return;
    stream.timer = setTimeout(() => {
      stream.timer = undefined;
      void fill(stream);
    }, delayMs);
  }

  /**
   * Reads the hole (and whatever follows) from the database, in pages, to its end. `force`: also
   * when nothing waits (a resync after this instance's Redis connection was away, when the latest
   * events may have been lost); so does a stream that dropped events (`missed`).
   */
  async function fill(stream: Stream, force = false): Promise<void> {
    if (
      streams.get(stream.awb) !== stream ||
      stream.head === undefined ||
      (stream.waiting.size === 0 && !force && !stream.missed)
    )
      return;
    if (stream.filling) {
      // One read at a time; the one under way reads again when it ends (see its end).
      if (force) stream.missed = true;
      return;
    }
    stream.filling = true;
    // This read covers what was dropped so far; whatever is dropped during it sets `missed` again.
    const mustRead = force || stream.missed;
    stream.missed = false;
    // What waits now was published after its commit, so a read that starts now must find it.
    const waitingBefore = new Set(stream.waiting.keys());
    try {
      for (;;) {
        const rows = await store.after(stream.awb, stream.head, FILL_PAGE);
        if (streams.get(stream.awb) !== stream) return; // closed meanwhile
        const stepOver = holeStepper(stream);
        for (const row of rows) {
          const position = Number(row.sequence);
          if (position > stream.head + 1 && !(await stepOver(position))) return;
          accept(stream, row, position);
        }
        if (rows.length < FILL_PAGE) break;
      }
      stream.retryMs = RETRY_MIN_MS;
    } catch (error) {
      log.warn({ err: error, awb: stream.awb }, "reading missed live events failed; retrying");
      if (mustRead) stream.missed = true; // the retry must read even if nothing waits by then
      stream.filling = false;
      scheduleFill(stream, (stream.retryMs = Math.min(RETRY_MAX_MS, stream.retryMs * 2)));
      return;
    } finally {
      stream.filling = false;
    }
    // An event that waited before the read and is still ahead of the head is not in this database
    // (published by an instance on another database or an older version): drop it, or it would
    // keep the stream reading forever.
    const stale = [...stream.waiting.keys()].filter((position) => waitingBefore.has(position));
    if (stale.length > 0) {
      for (const position of stale) stream.waiting.delete(position);
      log.warn(
        { awb: stream.awb, head: stream.head, dropped: stale.length },
        "dropped live events that the database does not have",
      );
    }
    // Events that arrived (or were dropped) during the read beyond what it covered: look again later.
    if (stream.waiting.size > 0 || stream.missed) scheduleFill(stream, GAP_GRACE_MS);
  }

  /**
   * For one read: moves the head to just before `position`, a row the read returned past a hole
   * after the head. Those positions are gone for good: one read that sees a position sees every
   * smaller one still stored (positions commit in order); retention's mark, read once a read, tells
   * its holes from others, which are logged. Answers false if the stream was closed meanwhile.
   */
  function holeStepper(stream: Stream): (position: number) => Promise<boolean> {
    let pruned: number | undefined;
    return async (position) => {
      pruned ??= await store.prunedThrough(stream.awb);
      if (streams.get(stream.awb) !== stream) return false;
      if (position <= stream.head! + 1) return true; // moved on meanwhile
      if (position - 1 > pruned)
        log.warn(
          { awb: stream.awb, from: stream.head! + 1, to: position - 1, prunedThrough: pruned },
          "live stream stepped over positions missing from storage that retention did not delete",
        );
      stream.head = position - 1;
      return true;
    };
  }

  function loadHead(stream: Stream): void {
    if (closed) return;
    if (headBatch) {
      headBatch.add(stream.awb);
      return;
    }
    headBatch = new Set([stream.awb]);
    setImmediate(() => {
      const awbs = [...headBatch!];
      headBatch = undefined;
      if (closed) return;
      store.heads(awbs).then(
        (heads) => {
          for (const awb of awbs) {
            const s = streams.get(awb);
            if (s && s.head === undefined) setHead(s, Number(heads.get(awb) ?? 0n));
          }
        },
        (error: unknown) => {
          log.warn({ err: error, awbs: awbs.length }, "reading live stream heads failed; retrying");
          const retry = setTimeout(() => {
            timers.delete(retry);
            for (const awb of awbs) {
              const s = streams.get(awb);
              if (s && s.head === undefined) loadHead(s);
            }
          }, RETRY_MAX_MS);
          timers.add(retry);
        },
      );
    });
  }

  function setHead(stream: Stream, head: number): void {
    stream.head = head;
    for (const member of stream.members) member.started(head);
    drainWaiting(stream);
  }

  const api = {
    /** Adds a member to an AWB's stream; returns the function that removes it (at once, and the stream with its last member). */
    join(awb: string, member: StreamMember): () => void {
      let stream = streams.get(awb);
      if (!stream) {
        stream = {
          awb,
          head: undefined,
          waiting: new Map(),
          missed: false,
          members: new Set(),
          timer: undefined,
          filling: false,
          retryMs: RETRY_MIN_MS,
        };
        streams.set(awb, stream);
        loadHead(stream);
      }
      stream.members.add(member);
      if (stream.head !== undefined) member.started(stream.head);
      const joined = stream;
      return () => {
        joined.members.delete(member);
        if (joined.members.size === 0 && streams.get(awb) === joined) {
          streams.delete(awb);
          if (joined.timer) clearTimeout(joined.timer);
          joined.waiting.clear();
        }
      };
    },
    /**
     * The AWB's head as committed, read now. What a stream has handed out can lag behind it (a publish
     * still on its way, a hole waiting for its grace period, a publish lost).
     */
    async storedHead(awb: string): Promise<number> {
      return Number((await store.heads([awb])).get(awb) ?? 0n);
    },
    /** The highest position retention has deleted from the AWB's stream (0: none), read now. */
    prunedThrough: (awb: string): Promise<number> => store.prunedThrough(awb),
    /** AWBs with at least one live listener in this process. */
    get size(): number {
      return streams.size;
    },
    /**
     * Fills what the database has beyond each stream's head. Without `announced`, reads every
     * stream's head again first: when this instance's own Redis subscription is live again after its
     * connection dropped (events published meanwhile never came here), when an instance announces
     * more AWBs than it keeps, and every `headsCheckMs`. With `announced` (another instance's
     * publisher is back: the heads of the AWBs it could only serve locally), fills the streams of
     * those AWBs that are behind.
     */
    resync(announced?: AnnouncedHeads): void {
      if (closed) return;
      if (announced !== undefined && announced !== "all") {
        for (const [awb, position] of announced) {
          const stream = streams.get(awb);
          if (stream?.head !== undefined && position > stream.head) void fill(stream, true);
        }
        return;
      }
      const known = [...streams.values()].filter((s) => s.head !== undefined);
      if (known.length === 0) return;
      store.heads(known.map((s) => s.awb)).then(
        (heads) => {
          for (const stream of known) if (Number(heads.get(stream.awb) ?? 0n) > stream.head!) void fill(stream, true);
        },
        (error: unknown) => log.warn({ err: error }, "resyncing live streams failed"),
      );
    },
    close(): void {
      closed = true;
      stopListening();
      stopResync();
      stopHeads();
      clearInterval(headsCheck);
      for (const stream of streams.values()) if (stream.timer) clearTimeout(stream.timer);
      for (const timer of timers) clearTimeout(timer);
      streams.clear();
    },
  };
  return api;
}

export type AwbStreams = ReturnType<typeof createAwbStreams>;
