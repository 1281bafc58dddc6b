import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { requireScope } from "../clients/client.service";
import type { GraphQLContext } from "../graphql/context";
import { parseMilestones } from "./milestone.validate";
import { DeliveryType, IngestResultType, StatusEventInputType, StatusEventType } from "./milestone.types";

@Resolver()
export class MilestoneResolver {
  @Mutation(() => [IngestResultType], { description: "Ingests up to 1,000 milestones (scope events:write), as POST …/handling/shipment/events." })
  async recordStatusEvents(@Arg("events", () => [StatusEventInputType]) events: StatusEventInputType[], @Ctx() ctx: GraphQLContext): Promise<IngestResultType[]> {
    requireScope(await ctx.auth(), "events:write");
    const plain = events.map((e) => Object.fromEntries(Object.entries({ ...e }).filter(([, v]) => v !== undefined && v !== null)));
    const parsed = parseMilestones(plain, { enforceCheckDigit: ctx.services.enforceCheckDigit, now: new Date() });
    return ctx.services.milestones.ingest(parsed);
  }

  @Query(() => [StatusEventType], { description: "The stored milestones of an AWB in the order they happened (scope events:read or subscriptions)." })
  async milestones(@Arg("awb") awb: string, @Ctx() ctx: GraphQLContext): Promise<StatusEventType[]> {
    requireScope(await ctx.auth(), "events:read", "subscriptions");
    return (await ctx.services.milestones.history(awb)).map((e) => new StatusEventType(e));
  }

  @Query(() => [DeliveryType], { description: "A subscription's deliveries, newest first, with their attempts." })
  async deliveries(
    @Arg("subscriptionId", () => ID) subscriptionId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("status", () => String, { nullable: true }) status?: string | null,
    @Arg("first", () => Int, { defaultValue: 50 }) first?: number,
  ): Promise<DeliveryType[]> {
    const principal = requireScope(await ctx.auth(), "subscriptions");
    return ctx.services.deliveries.listForSubscription(principal, subscriptionId, { status: status ?? undefined, first: first ?? 50 });
  }

  @Mutation(() => DeliveryType, { description: "Sends a dead or delivered notification again, with the same webhook-id." })
  async redeliver(@Arg("deliveryId", () => ID) deliveryId: string, @Ctx() ctx: GraphQLContext): Promise<DeliveryType> {
    const principal = requireScope(await ctx.auth(), "subscriptions");
    return ctx.services.deliveries.redeliver(principal, deliveryId);
  }

  @Mutation(() => Int, { description: "Requeues every dead delivery of a subscription (optionally created in [from, to)); returns how many." })
  async redeliverDead(
    @Arg("subscriptionId", () => ID) subscriptionId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("from", () => Date, { nullable: true }) from?: Date | null,
    @Arg("to", () => Date, { nullable: true }) to?: Date | null,
  ): Promise<number> {
    const principal = requireScope(await ctx.auth(), "subscriptions");
    return ctx.services.deliveries.redeliverDead(principal, subscriptionId, { from, to });
  }
}
