import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { requireScope } from "../clients/principal";
import type { GraphQLContext } from "../graphql-core/context";
import { DeliveryType } from "./delivery.types";

/** A subscription's deliveries and their redelivery (scope `subscriptions`), as the REST routes in delivery.routes.ts. */
@Resolver()
export class DeliveryResolver {
  @Query(() => [DeliveryType], { description: "A subscription's deliveries, newest first, with their attempts." })
  async deliveries(
    @Arg("subscriptionId", () => ID) subscriptionId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("status", () => String, { nullable: true }) status?: string | null,
    @Arg("first", () => Int, { defaultValue: 50 }) first?: number,
  ): Promise<DeliveryType[]> {
    const principal = requireScope(await ctx.auth(), "subscriptions");
    return ctx.services.deliveries.listForSubscription(principal, subscriptionId, {
      status: status ?? undefined,
      first: first ?? 50,
    });
  }

  @Mutation(() => DeliveryType, {
    description:
      "Sends a dead or delivered notification again, with the same webhook-id (PARKED while its subscription is disabled).",
  })
  async redeliver(@Arg("deliveryId", () => ID) deliveryId: string, @Ctx() ctx: GraphQLContext): Promise<DeliveryType> {
    const principal = requireScope(await ctx.auth(), "subscriptions");
    return ctx.services.deliveries.redeliver(principal, deliveryId);
  }

  @Mutation(() => Int, {
    description: "Requeues every dead delivery of a subscription (optionally created in [from, to)); returns how many.",
  })
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
