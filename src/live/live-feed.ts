import type { Logger } from "pino";
import { validationError } from "../errors";
import type { WebSocket } from "ws";
import type { AwbStreams, StreamMember } from "./awb-streams";
import type { LiveMilestone } from "./live-events";
import type { LiveOperation } from "./live-operations";

/** Close code for a slow consumer: "too many" in the HTTP-mirroring 4xxx range. */
export const SLOW_CONSUMER_CLOSE = 4429;
/** Rows per read while catching up. */
const CATCH_UP_PAGE = 500;

/** What one subscription asked for, checked by the resolver before the feed starts. */
export interface FeedSpec {
  /** Canonical AWBs. */
  readonly awbs: readonly string[];
  /** Status codes wanted; null for all. */
  readonly states: ReadonlySet<string> | null;
  /** Per AWB: replay what was stored after this position first. Absent: live from now on. */
  readonly after: ReadonlyMap<string, number>;
}

/** What every feed reads from, shared by all of them. */
export interface FeedSource {
  streams: AwbStreams;
  /** One AWB's stored events after a position, oldest first. */
  readAfter(awb: string, position: number, limit: number): Promise<LiveMilestone[]>;
  /** How many frames may wait in the socket's send buffer (or in a catch-up) before the consumer counts as slow. */
  maxQueuedEvents: number;
  log: Logger;
}

/** What one feed writes to. */
export interface FeedWiring {
  socket: Pick<WebSocket, "send" | "close" | "readyState" | "bufferedAmount">;
  /** The subscription id the frames carry. */
  id: string;
  operation: LiveOperation;
  /** Called once when the feed ends, however it ends: with its failure, if it failed. */
  onEnd(failure: unknown): void;
}

const DONE: IteratorResult<never> = { done: true, value: undefined };
/** A non-Error rejection as an Error, as the operation's `error` frame reports it. */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
const OPEN = 1;

/**
 * A live subscription as GraphQL's `subscribe` resolvers return it: an async iterator that never
 * yields (the protocol, graphql-ws-server.ts, recognises it and starts it). Frames do not pass through
 * a per-socket execute-and-stringify loop; the feed writes them to the socket itself, each being `{"id":…,"type":"next","payload":…}` around a payload rendered once per
 * (event, operation) and shared by every feed of that operation (live-operations.ts).
 *
 * `return()` (the client's `complete`, or its socket closing) ends the feed at once and leaves every
 * stream — unlike an async generator, whose `return()` waits for a pending `next()` to settle, which
 * for a quiet AWB is never.
 */
export class LiveFeed implements AsyncIterableIterator<never> {
  private source: FeedSource | undefined;
  private wiring: FeedWiring | undefined;
  private readonly leaves: Array<() => void> = [];
  private ended = false;
  private failure: unknown;
  private pendingNext: ((result: IteratorResult<never>) => void) | undefined;
  private rejectNext: ((error: unknown) => void) | undefined;
  private prefix = "";
  /** Set while a payload is being rendered asynchronously: later frames queue behind it to keep order. */
  private tail: Promise<void> | undefined;

  constructor(readonly spec: FeedSpec) {}

  /** Joins the AWBs' streams and, where `after` was given, replays from storage first. */
  start(source: FeedSource, wiring: FeedWiring): void {
    if (this.ended) return;
    this.source = source;
    this.wiring = wiring;
    this.prefix = `{"id":${JSON.stringify(wiring.id)},"type":"next","payload":`;
    for (const awb of this.spec.awbs) {
      const member = new FeedMember(this, awb, this.spec.after.get(awb));
      this.leaves.push(source.streams.join(awb, member));
    }
  }

  wants(event: LiveMilestone): boolean {
    return this.spec.states === null || this.spec.states.has(event.state);
  }

  /** Sends one event's frame, in the order called. */
  deliver(event: LiveMilestone): void {
    const wiring = this.wiring;
    if (this.ended || !wiring) return;
    const payload = wiring.operation.payloadFor(event);
    if (this.tail === undefined && typeof payload === "string") return this.write(payload);
    const previous = this.tail ?? Promise.resolve();
    const next: Promise<void> = previous
      .then(() => payload)
      .then(
        (text) => this.write(text),
        (error: unknown) => this.fail(error),
      )
      .finally(() => {
        if (this.tail === next) this.tail = undefined;
      });
    this.tail = next;
  }

  private write(payload: string): void {
    const wiring = this.wiring;
    if (this.ended || !wiring || wiring.socket.readyState !== OPEN) return;
    const frame = `${this.prefix}${payload}}`;
    // bufferedAmount counts bytes not yet handed to the kernel: this many frames of this size.
    if (wiring.socket.bufferedAmount > this.source!.maxQueuedEvents * frame.length) return this.tooSlow();
    wiring.socket.send(frame);
  }

  tooSlow(): void {
    if (this.ended) return;
    this.wiring?.socket.close(
      SLOW_CONSUMER_CLOSE,
      "Slow consumer: live events were arriving faster than they were read",
    );
    this.end();
  }

  /** Ends the feed with an error, which the protocol sends to the client as this operation's `error`. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = error;
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const leave of this.leaves) leave();
    this.leaves.length = 0;
    const resolve = this.pendingNext;
    const reject = this.rejectNext;
    this.pendingNext = this.rejectNext = undefined;
    if (this.failure !== undefined && reject) reject(this.failure);
    else resolve?.(DONE);
    this.wiring?.onEnd(this.failure);
    this.wiring = undefined;
    this.source = undefined;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** What a member catching up reads from; undefined once the feed has ended. */
  get catchUp(): FeedSource | undefined {
    return this.source;
  }

  next(): Promise<IteratorResult<never>> {
    if (this.ended) return this.failure !== undefined ? Promise.reject(asError(this.failure)) : Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.pendingNext = resolve;
      this.rejectNext = reject;
    });
  }

  return(): Promise<IteratorResult<never>> {
    this.failure = undefined;
    this.end();
    return Promise.resolve(DONE);
  }

  throw(error?: unknown): Promise<IteratorResult<never>> {
    this.end();
    return Promise.reject(asError(error));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * One feed's place in one AWB's stream. `last` is the position handled last (sent, or skipped by the
 * states filter). Events arrive in order from the stream; the only hole a member can see is at its
 * start, between the `after` it was given and the stream's head, which it reads from storage. An
 * `after` beyond the stream's head is checked against the stored head instead (the stream may lag
 * behind the database), and the stream's events are held meanwhile.
 *
 * Holes in storage. Retention deletes an AWB's old events and keeps its numbering, so what storage
 * has after a position can start past a hole. Such a hole is for good: positions commit in order
 * (milestone.store.ts), so one read that sees a position sees every smaller one that still exists.
 * Catch-up steps over it (retention's `prunedThrough` says it made it; a hole it does not explain is
 * stepped over too, with a warning, since nothing can fill it), so a client resuming from before
 * what retention deleted gets what is kept and what follows.
 */
class FeedMember implements StreamMember {
  private last: number | undefined;
  /** Stream events held while catching up, each with how many reads had started when it came. */
  private held: Array<{ event: LiveMilestone; position: number; readsBefore: number }> | undefined;
  /** Reads of storage started so far. */
  private reads = 0;

  constructor(
    private readonly feed: LiveFeed,
    private readonly awb: string,
    after: number | undefined,
  ) {
    this.last = after;
  }

  started(head: number): void {
    if (this.last === undefined) this.last = head;
    else if (this.last > head && !this.held) {
      // The stream has not handed out that position, but the database may have it: the client read
      // the history there, while this stream's copy of the event is still on its way (or lost).
      // Hold the stream's events until the stored head has been read.
      this.held = [];
      void this.checkAfter();
    } else if (this.last < head && !this.held) {
      this.held = [];
      void this.catchUp();
    }
  }

  next(event: LiveMilestone, position: number): void {
    if (this.last === undefined || position <= this.last || this.feed.isEnded) return;
    if (this.held) {
      if (this.held.length >= (this.feed.catchUp?.maxQueuedEvents ?? Infinity)) return this.feed.tooSlow();
      this.held.push({ event, position, readsBefore: this.reads });
      return;
    }
    if (position !== this.last + 1) {
      this.held = [{ event, position, readsBefore: this.reads }];
      void this.catchUp();
      return;
    }
    this.handle(event, position);
  }

  private handle(event: LiveMilestone, position: number): void {
    this.last = position;
    if (this.feed.wants(event)) this.feed.deliver(event);
  }

  /**
   * `after` is beyond what the stream has handed out: accepted if the AWB has stored that position
   * (then catches up after it), refused otherwise.
   */
  private async checkAfter(): Promise<void> {
    const source = this.feed.catchUp;
    if (!source) return;
    let stored: number;
    try {
      stored = await source.streams.storedHead(this.awb);
    } catch (error) {
      source.log.warn({ err: error, awb: this.awb }, "reading a live stream's head failed");
      return this.feed.fail(error);
    }
    if (this.feed.isEnded) return;
    if (this.last! > stored) {
      // No event of this AWB has that sequence yet: the client's position is from elsewhere (another
      // AWB, or a global sequence from an older gateway). Waiting on it would silently drop events.
      return this.feed.fail(
        validationError([
          {
            field: "after",
            message: `is ${this.last}, but ${this.awb} has ${stored} events so far: pass the sequence of the last event of this AWB you saw (or none)`,
          },
        ]),
      );
    }
    await this.catchUp();
  }

  /**
   * Reads from storage after `last` until the held stream events follow on. Every round either
   * moves `last` on or waits on a timer before reading again: a round that cannot move on is one
   * whose held events came during its read (they may have committed after it), and the next read
   * finds them.
   */
  private async catchUp(): Promise<void> {
    const source = this.feed.catchUp;
    if (!source) return;
    let idleRounds = 0;
    try {
      for (;;) {
        const start = this.last!;
        const read = ++this.reads;
        const rows = await source.readAfter(this.awb, start, CATCH_UP_PAGE);
        if (this.feed.isEnded) return;
        const stepOver = this.holeStepper(source);
        for (const row of rows) {
          const position = Number(row.sequence);
          if (position <= this.last!) continue;
          // A hole before a row that one read returned: those positions are gone for good.
          if (position > this.last! + 1 && !(await stepOver(position))) return;
          this.handle(row, position);
        }
        if (rows.length === CATCH_UP_PAGE) continue; // every row moved `last` on
        const held = this.held!;
        while (held.length > 0) {
          const { event, position, readsBefore } = held[0]!;
          if (position > this.last! + 1) {
            // Held before this read began, so committed before it: the read would have returned
            // whatever of the hole still exists. Held during the read: the next read decides.
            if (readsBefore >= read || !(await stepOver(position))) break;
          }
          held.shift();
          if (position > this.last!) this.handle(event, position);
        }
        if (held.length === 0) break;
        if (this.last! > start) idleRounds = 0;
        else {
          await new Promise((resolve) => setTimeout(resolve, idleWaitMs(++idleRounds)).unref());
          if (this.feed.isEnded) return;
        }
      }
      this.held = undefined;
    } catch (error) {
      source.log.warn({ err: error, awb: this.awb }, "catching up a live subscription failed");
      this.feed.fail(error);
    }
  }

  /**
   * For one round: moves `last` to just before `position` over a hole storage will never fill,
   * reading retention's mark (once a round) to tell its holes from others, which are logged.
   * Answers false if the feed ended meanwhile.
   */
  private holeStepper(source: NonNullable<LiveFeed["catchUp"]>): (position: number) => Promise<boolean> {
    let pruned: number | undefined;
    return async (position) => {
      pruned ??= await source.streams.prunedThrough(this.awb);
      if (this.feed.isEnded) return false;
      if (position - 1 > pruned)
        source.log.warn(
          { awb: this.awb, from: this.last! + 1, to: position - 1, prunedThrough: pruned },
          "live catch-up stepped over positions missing from storage that retention did not delete",
        );
      this.last = Math.max(this.last!, position - 1);
      return true;
    };
  }
}

/** The wait before the next read after `rounds` rounds in a row that moved nothing on: 50 ms doubling to 2 s. */
function idleWaitMs(rounds: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(rounds - 1, 6));
}
