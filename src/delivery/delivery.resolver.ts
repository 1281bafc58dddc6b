import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { callerOf } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { DeliveryType } from "./delivery.types";

/** A subscription's deliveries and their redelivery (scope `subscriptions`), as the REST routes in delivery.routes.ts. */
@Resolver()
export class DeliveryResolver {
  @Query(() => [DeliveryType], { description: "A subscription's deliveries, newest first, with their attempts." })
  @Authorized("subscriptions")
  async deliveries(
    @Arg("subscriptionId", () => ID) subscriptionId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("status", () => String, { nullable: true }) status?: string | null,
    @Arg("first", () => Int, { defaultValue: 50 }) first?: number,
  ): Promise<DeliveryType[]> {
    const principal = await callerOf(ctx);
    return ctx.services.deliveries.listForSubscription(principal, subscriptionId, {
      status: status ?? undefined,
      first: first ?? 50,
    });
  }

  @Mutation(() => DeliveryType, {
    description:
      "Sends a dead or delivered notification again, with the same webhook-id (PARKED while its subscription is disabled).",
  })
  @Authorized("subscriptions")
  async redeliver(@Arg("deliveryId", () => ID) deliveryId: string, @Ctx() ctx: GraphQLContext): Promise<DeliveryType> {
    const principal = await callerOf(ctx);
    return ctx.services.deliveries.redeliver(principal, deliveryId);
  }

  @Mutation(() => Int, {
    description: "Requeues every dead delivery of a subscription (optionally created in [from, to)); returns how many.",
  })
  @Authorized("subscriptions")
  async redeliverDead(
    @Arg("subscriptionId", () => ID) subscriptionId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("from", () => Date, { nullable: true }) from?: Date | null,
    @Arg("to", () => Date, { nullable: true }) to?: Date | null,
  ): Promise<number> {
    const principal = await callerOf(ctx);
    return ctx.services.deliveries.redeliverDead(principal, subscriptionId, { from, to });
  }
}
