import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from "type-graphql";
import { callerOf } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { parseMilestones } from "./milestone.validate";
import { CarrierStatusType } from "./carrier-status.types";
import { IngestResultType, StatusEventInputType, StatusEventType } from "./milestone.types";

@Resolver()
export class MilestoneResolver {
  @Mutation(() => [IngestResultType], {
    description: "Ingests up to 1,000 milestones (scope events:write), as POST …/handling/shipment/events.",
  })
  @Authorized("events:write")
  async recordStatusEvents(
    @Arg("events", () => [StatusEventInputType]) events: StatusEventInputType[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<IngestResultType[]> {
    const { clientId } = await callerOf(ctx);
    const plain = events.map((e) =>
      Object.fromEntries(Object.entries({ ...e }).filter(([, v]) => v !== undefined && v !== null)),
    );
    const parsed = parseMilestones(plain, {
      enforceCheckDigit: ctx.services.enforceCheckDigit,
      now: new Date(),
      isStation: (code) => ctx.services.stations.isStation(code),
    });
    return ctx.services.milestones.ingest(parsed, new Date(), [], { clientId });
  }

  @Query(() => [StatusEventType], {
    description: "The stored milestones of an AWB in the order they happened (scope events:read or subscriptions).",
  })
  @Authorized("events:read", "subscriptions")
  async milestones(@Arg("awb") awb: string, @Ctx() ctx: GraphQLContext): Promise<StatusEventType[]> {
    return (await ctx.services.milestones.history(awb)).map((e) => new StatusEventType(e));
  }

  @Query(() => [CarrierStatusType], {
    description:
      "Every status FSU and XFSU messages reported for an AWB, milestones or not, with pieces and weight, in the order they happened; at most 1,000 (scope events:read or subscriptions).",
  })
  @Authorized("events:read", "subscriptions")
  async carrierStatuses(@Arg("awb") awb: string, @Ctx() ctx: GraphQLContext): Promise<CarrierStatusType[]> {
    return (await ctx.services.milestones.carrierStatuses(awb)).map((s) => new CarrierStatusType(s));
  }
}
