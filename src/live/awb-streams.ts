import type { Logger } from "pino";
import type { LiveEvents, LiveMilestone } from "./live-events";

/** What the streams read from storage: an AWB's head, and its events after a position (oldest first). */
export interface StreamStore {
  heads(awbs: readonly string[]): Promise<Map<string, bigint>>;
  after(awb: string, position: number, limit: number): Promise<LiveMilestone[]>;
}

/**
 * One listener of one AWB. A stream hands its members the AWB's events in position order, each once,
 * starting after the head it had when the member joined (or, for a member that joined before the
 * head was read, after that head).
 */
export interface StreamMember {
  /** Called with the head when it is known, before any event: the member's start unless it set its own. */
  started(head: number): void;
  /**
   * The AWB's next event, in order. `render` gives this event's payload for an operation and is
   * shared by every member of the stream: one execution per (event, operation).
   */
  next(event: LiveMilestone, position: number, shared: SharedRenders): void;
}

/** Payloads already rendered for one event, keyed by operation; filled by the first member that needs one. */
export type SharedRenders = Map<object, string | Promise<string>>;

/** How long a hole in an AWB's positions may stay open before it is filled from the database. */
const GAP_GRACE_MS = 50;
/** Rows per read when filling a hole. */
const FILL_PAGE = 500;
/** Out-of-order events kept per AWB while a hole is open; past it, all are read again from the database. */
const MAX_WAITING = 10_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

interface Stream {
  readonly awb: string;
  /** Position of the last event handed out; undefined until read from the database. */
  head: number | undefined;
  /** Events that arrived ahead of a hole (or before the head was known), by position. */
  readonly waiting: Map<number, LiveMilestone>;
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
export function createAwbStreams({ live, store, log }: { live: Pick<LiveEvents, "listen">; store: StreamStore; log: Logger }) {
  const streams = new Map<string, Stream>();
  /** AWBs whose heads are to be read in the next batch (one query for every stream opened in a tick). */
  let headBatch: Set<string> | undefined;

  const stopListening = live.listen((batch) => {
    for (const event of batch) {
      const stream = streams.get(event.awb);
      if (stream) accept(stream, event, Number(event.sequence));
    }
  });

  function emit(stream: Stream, event: LiveMilestone, position: number): void {
    stream.head = position;
    const shared: SharedRenders = new Map();
    for (const member of stream.members) {
      try {
        member.next(event, position, shared);
      } catch (error) {
        log.warn({ err: error, awb: stream.awb }, "a live subscriber failed on an event");
      }
    }
  }

  function accept(stream: Stream, event: LiveMilestone, position: number): void {
    if (stream.head === undefined) {
      if (stream.waiting.size < MAX_WAITING) stream.waiting.set(position, event);
      return;
    }
    if (position <= stream.head) return;
    if (position === stream.head + 1) {
      emit(stream, event, position);
      drainWaiting(stream);
      return;
    }
    if (stream.waiting.size >= MAX_WAITING) stream.waiting.clear(); // the fill reads them all again
    stream.waiting.set(position, event);
    scheduleFill(stream, GAP_GRACE_MS);
  }

  function drainWaiting(stream: Stream): void {
    for (let next = stream.waiting.get(stream.head! + 1); next !== undefined; next = stream.waiting.get(stream.head! + 1)) {
      stream.waiting.delete(stream.head! + 1);
      emit(stream, next, stream.head! + 1);
    }
    for (const position of stream.waiting.keys()) if (position <= stream.head!) stream.waiting.delete(position);
    if (stream.waiting.size > 0) scheduleFill(stream, GAP_GRACE_MS);
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

  /** Reads the hole (and whatever follows) from the database, in pages, until nothing waits. */
  async function fill(stream: Stream): Promise<void> {
    if (streams.get(stream.awb) !== stream || stream.head === undefined || stream.waiting.size === 0) return;
    stream.filling = true;
    try {
      for (;;) {
        const rows = await store.after(stream.awb, stream.head, FILL_PAGE);
        if (streams.get(stream.awb) !== stream) return; // closed meanwhile
        for (const row of rows) accept(stream, row, Number(row.sequence));
        if (rows.length < FILL_PAGE || stream.waiting.size === 0) break;
      }
      stream.retryMs = RETRY_MIN_MS;
    } catch (error) {
      log.warn({ err: error, awb: stream.awb }, "reading missed live events failed; retrying");
      stream.filling = false;
      scheduleFill(stream, (stream.retryMs = Math.min(RETRY_MAX_MS, stream.retryMs * 2)));
      return;
    } finally {
      stream.filling = false;
    }
    // Events that arrived during the read beyond a hole the read did not cover: look again later.
    if (stream.waiting.size > 0) scheduleFill(stream, GAP_GRACE_MS);
  }

  function loadHead(stream: Stream): void {
    if (headBatch) {
      headBatch.add(stream.awb);
      return;
    }
    headBatch = new Set([stream.awb]);
    setImmediate(() => {
      const awbs = [...headBatch!];
      headBatch = undefined;
      store.heads(awbs).then(
        (heads) => {
          for (const awb of awbs) {
            const s = streams.get(awb);
            if (s && s.head === undefined) setHead(s, Number(heads.get(awb) ?? 0n));
          }
        },
        (error: unknown) => {
          log.warn({ err: error, awbs: awbs.length }, "reading live stream heads failed; retrying");
          setTimeout(() => {
            for (const awb of awbs) {
              const s = streams.get(awb);
              if (s && s.head === undefined) loadHead(s);
            }
          }, RETRY_MAX_MS).unref();
        },
      );
    });
  }

  function setHead(stream: Stream, head: number): void {
    stream.head = head;
    for (const member of stream.members) member.started(head);
    drainWaiting(stream);
  }

  return {
    /** Adds a member to an AWB's stream; returns the function that removes it (at once, and the stream with its last member). */
    join(awb: string, member: StreamMember): () => void {
      let stream = streams.get(awb);
      if (!stream) {
        stream = { awb, head: undefined, waiting: new Map(), members: new Set(), timer: undefined, filling: false, retryMs: RETRY_MIN_MS };
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
    /** AWBs with at least one live listener in this process. */
    get size(): number {
      return streams.size;
    },
    close(): void {
      stopListening();
      for (const stream of streams.values()) if (stream.timer) clearTimeout(stream.timer);
      streams.clear();
    },
  };
}

export type AwbStreams = ReturnType<typeof createAwbStreams>;
