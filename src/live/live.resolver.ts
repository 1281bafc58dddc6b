import { Arg, Field, InputType, Resolver, Root, type SubscribeResolverData, Subscription } from "type-graphql";
import { parseAwb } from "../domain/awb";
import { validationError } from "../errors";
import { authorizedSubscribe } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { StatusEventType } from "../milestones/milestone.types";
import { StatusCode, toStoredCode } from "../subscriptions/subscription.types";
import type { LiveMilestone } from "./live-events";
import { LiveFeed } from "./live-feed";

/** Most AWBs one `statusEvents` subscription may watch. */
export const MAX_WATCHED_AWBS = 100;
const POSITION = /^\d{1,15}$/;

@InputType("StreamPosition", {
  description: "Where to resume one AWB's stream: the `sequence` of the last event of that AWB seen.",
})
export class StreamPositionInput {
  @Field() awb!: string;
  @Field() sequence!: string;
}

function parseAwbField(value: string, field: string): string {
  const awb = parseAwb(value);
  if (!awb) throw validationError([{ field, message: "must be an AWB such as 020-12345675" }]);
  return awb.canonical;
}

function parsePosition(value: string, field: string): number {
  if (!POSITION.test(value))
    throw validationError([{ field, message: "must be the sequence of an earlier event of this AWB" }]);
  return Number(value);
}

function wantedStates(states: readonly StatusCode[] | null | undefined): Set<string> | null {
  return states && states.length > 0 && !states.includes(StatusCode.ALL) ? new Set(states.map(toStoredCode)) : null;
}

/**
 * A live feed of the AWBs' events (see live-feed.ts): what was stored after each AWB's `after`
 * position first, then live events, each once and in each AWB's order. Its arguments are checked
 * here; it is started by the websocket transport, which knows the socket it writes to.
 */
function watch(
  awbs: readonly string[],
  states: readonly StatusCode[] | null | undefined,
  after: ReadonlyMap<string, number>,
): LiveFeed {
  return new LiveFeed({ awbs: [...new Set(awbs)], states: wantedStates(states), after });
}

type Data = SubscribeResolverData<unknown, Record<string, unknown>, GraphQLContext>;

@Resolver()
export class LiveResolver {
  @Subscription(() => StatusEventType, {
    description:
      "Milestones of one AWB as they are stored, in order (scope events:read); `states` omitted means all; `after` (the `sequence` of the last event seen) first replays what was stored since.",
    subscribe: authorizedSubscribe(["events:read"], ({ args }: Data) => {
      const awb = parseAwbField(args.awb as string, "awb");
      const after =
        args.after === undefined || args.after === null
          ? new Map<string, number>()
          : new Map([[awb, parsePosition(args.after as string, "after")]]);
      return watch([awb], args.states as StatusCode[] | null, after);
    }),
  })
  awbStatusChanged(
    @Root() event: LiveMilestone,
    @Arg("awb") _awb: string,
    @Arg("states", () => [StatusCode], { nullable: true }) _states?: StatusCode[] | null,
    @Arg("after", () => String, { nullable: true }) _after?: string | null,
  ): StatusEventType {
    return StatusEventType.fromView(event);
  }

  @Subscription(() => StatusEventType, {
    description: `Milestones of up to ${MAX_WATCHED_AWBS} AWBs, for dashboards (scope events:read), each AWB's in order; \`after\` lists, per AWB, the \`sequence\` of the last event seen.`,
    subscribe: authorizedSubscribe(["events:read"], ({ args }: Data) => {
      const values = args.awbs as string[];
      if (values.length === 0 || values.length > MAX_WATCHED_AWBS)
        throw validationError([{ field: "awbs", message: `must list 1 to ${MAX_WATCHED_AWBS} AWBs` }]);
      const awbs = values.map((v, i) => parseAwbField(v, `awbs[${i}]`));
      const after = new Map<string, number>();
      ((args.after as StreamPositionInput[] | null | undefined) ?? []).forEach((p, i) => {
        const awb = parseAwbField(p.awb, `after[${i}].awb`);
        if (!awbs.includes(awb))
          throw validationError([{ field: `after[${i}].awb`, message: "must be one of the AWBs watched" }]);
        after.set(awb, parsePosition(p.sequence, `after[${i}].sequence`));
      });
      return watch(awbs, args.states as StatusCode[] | null, after);
    }),
  })
  statusEvents(
    @Root() event: LiveMilestone,
    @Arg("awbs", () => [String]) _awbs: string[],
    @Arg("states", () => [StatusCode], { nullable: true }) _states?: StatusCode[] | null,
    @Arg("after", () => [StreamPositionInput], { nullable: true }) _after?: StreamPositionInput[] | null,
  ): StatusEventType {
    return StatusEventType.fromView(event);
  }
}
