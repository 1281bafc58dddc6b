import { Arg, Resolver, Root, type SubscribeResolverData, Subscription } from "type-graphql";
import { requireScope } from "../clients/client.service";
import { parseAwb } from "../domain/awb";
import { validationError } from "../errors";
import type { GraphQLContext } from "../graphql/context";
import { milestoneView } from "../milestones/milestone.view";
import { StatusEventType } from "../milestones/milestone.types";
import { StatusCode, toStoredCode } from "../subscriptions/subscription.types";
import type { LiveMilestone } from "./live-events";

/** Close code for a slow consumer: "too many" in the HTTP-mirroring 4xxx range. */
export const SLOW_CONSUMER_CLOSE = 4429;

/** Most AWBs one `statusEvents` subscription may watch. */
export const MAX_WATCHED_AWBS = 100;

interface WatchArgs {
  awbs: string[];
  states?: StatusCode[] | null;
  after?: string | null;
}

function parseAwbs(values: readonly string[]): string[] {
  if (values.length === 0 || values.length > MAX_WATCHED_AWBS) throw validationError([{ field: "awbs", message: `must list 1 to ${MAX_WATCHED_AWBS} AWBs` }]);
  const problems: Array<{ field: string; message: string }> = [];
  const parsed = values.map((v, i) => {
    const awb = parseAwb(v);
    if (!awb) problems.push({ field: `awbs[${i}]`, message: "must be an AWB such as 020-12345675" });
    return awb?.canonical ?? "";
  });
  if (problems.length > 0) throw validationError(problems);
  return [...new Set(parsed)];
}

/**
 * The live stream of one subscription: first what was stored after `after` (catch-up after a
 * reconnect), then live events. Listening starts before the history is read, and events already
 * yielded from history are skipped by sequence, so the seam loses and repeats nothing.
 */
async function* watch(ctx: GraphQLContext, { awbs, states, after }: WatchArgs): AsyncGenerator<LiveMilestone> {
  requireScope(await ctx.auth(), "events:read");
  const watched = new Set(parseAwbs(awbs));
  const wanted = states && states.length > 0 && !states.includes(StatusCode.ALL) ? new Set(states.map(toStoredCode)) : null;
  if (after !== undefined && after !== null && !/^\d{1,19}$/.test(after)) throw validationError([{ field: "after", message: "must be a sequence number from an earlier event" }]);
  const matches = (e: LiveMilestone) => watched.has(e.awb) && (wanted === null || wanted.has(e.state));

  // Our own bounded queue, filled by a synchronous listener: a consumer that falls this far behind
  // is cut off (its socket closed with 4429) instead of queueing without bound.
  const queue: LiveMilestone[][] = [];
  let queued = 0;
  let notify: (() => void) | undefined;
  let overflowed = false;
  const stop = ctx.services.live.listen((batch) => {
    const relevant = batch.filter(matches);
    if (relevant.length === 0) return;
    if (queued + relevant.length > ctx.services.live.maxQueuedEvents) overflowed = true;
    else {
      queue.push(relevant);
      queued += relevant.length;
    }
    notify?.();
  });
  try {
    let last = -1n;
    if (after !== undefined && after !== null) {
      last = BigInt(after);
      for (const stored of await ctx.services.milestones.since([...watched], last)) {
        const event = milestoneView(stored);
        last = stored.seq;
        if (matches(event)) yield event;
      }
    }
    for (;;) {
      if (overflowed) {
        ctx.closeConnection?.(SLOW_CONSUMER_CLOSE, "Slow consumer: live events were arriving faster than they were read");
        return;
      }
      const batch = queue.shift();
      if (batch) queued -= batch.length;
      if (!batch) {
        await new Promise<void>((resolve) => (notify = resolve));
        notify = undefined;
        continue;
      }
      for (const event of batch) if (BigInt(event.sequence) > last) yield event;
    }
  } finally {
    stop();
  }
}

const toType = (e: LiveMilestone): StatusEventType =>
  new StatusEventType({
    id: e.eventId,
    seq: BigInt(e.sequence),
    awb: e.awb,
    state: e.state,
    occurredAt: new Date(e.timestamp),
    receivedAt: new Date(e.receivedAt),
    toaTimestamp: e.toaTimestamp === null ? null : new Date(e.toaTimestamp),
    station: e.station,
    flight: e.flight,
  });

@Resolver()
export class LiveResolver {
  @Subscription(() => StatusEventType, {
    description: "Milestones of one AWB as they are stored (scope events:read); `states` omitted means all; `after` (a sequence) first replays what was stored since.",
    subscribe: ({ args, context }: SubscribeResolverData<unknown, Record<string, unknown>, GraphQLContext>) => watch(context, { awbs: [args.awb as string], states: args.states as StatusCode[] | null, after: args.after as string | null }),
  })
  awbStatusChanged(
    @Root() event: LiveMilestone,
    @Arg("awb") _awb: string,
    @Arg("states", () => [StatusCode], { nullable: true }) _states?: StatusCode[] | null,
    @Arg("after", () => String, { nullable: true }) _after?: string | null,
  ): StatusEventType {
    return toType(event);
  }

  @Subscription(() => StatusEventType, {
    description: `Milestones of up to ${MAX_WATCHED_AWBS} AWBs, for dashboards (scope events:read).`,
    subscribe: ({ args, context }: SubscribeResolverData<unknown, Record<string, unknown>, GraphQLContext>) => watch(context, { awbs: args.awbs as string[], states: args.states as StatusCode[] | null, after: args.after as string | null }),
  })
  statusEvents(
    @Root() event: LiveMilestone,
    @Arg("awbs", () => [String]) _awbs: string[],
    @Arg("states", () => [StatusCode], { nullable: true }) _states?: StatusCode[] | null,
    @Arg("after", () => String, { nullable: true }) _after?: string | null,
  ): StatusEventType {
    return toType(event);
  }
}

