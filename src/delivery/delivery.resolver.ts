import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { callerOf } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { DeliveryType, OneRecordDeliveryType } from "./delivery.types";

/**
 * A subscription's deliveries and their redelivery (scope `subscriptions`), as the REST routes in
 * delivery.routes.ts; and for operators (scope `admin`), the ONE Record notifications in the outbox.
 */
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

  @Query(() => [OneRecordDeliveryType], {
    description:
      "admin: ONE Record notifications in the outbox, newest first, with their attempts: one SubscriptionRequest's, or every one.",
  })
  @Authorized("admin")
  async oneRecordDeliveries(
    @Ctx() ctx: GraphQLContext,
    @Arg("subscriptionRequestId", () => ID, { nullable: true }) subscriptionRequestId?: string | null,
    @Arg("status", () => String, { nullable: true }) status?: string | null,
    @Arg("first", () => Int, { defaultValue: 50 }) first?: number,
  ): Promise<OneRecordDeliveryType[]> {
    return ctx.services.deliveries.oneRecord.list(subscriptionRequestId ?? undefined, {
      status: status ?? undefined,
      first: first ?? 50,
    });
  }

  @Mutation(() => OneRecordDeliveryType, {
    description:
      "admin: sends a dead or delivered ONE Record notification again, same Notification-Id and body (PARKED while its subscription is disabled).",
  })
  @Authorized("admin")
  async redeliverOneRecordDelivery(
    @Arg("deliveryId", () => ID) deliveryId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<OneRecordDeliveryType> {
    return ctx.services.deliveries.oneRecord.redeliver(deliveryId);
  }

  @Mutation(() => Int, {
    description:
      "admin: requeues every dead notification of a ONE Record SubscriptionRequest (optionally created in [from, to)); returns how many.",
  })
  @Authorized("admin")
  async redeliverDeadOneRecordDeliveries(
    @Arg("subscriptionRequestId", () => ID) subscriptionRequestId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("from", () => Date, { nullable: true }) from?: Date | null,
    @Arg("to", () => Date, { nullable: true }) to?: Date | null,
  ): Promise<number> {
    return ctx.services.deliveries.oneRecord.redeliverDead(subscriptionRequestId, { from, to });
  }

  @Mutation(() => Boolean, {
    description:
      "admin: enables a ONE Record subscription that delivery disabled; its parked notifications are due at once. False when it was not disabled.",
  })
  @Authorized("admin")
  async enableOneRecordSubscription(
    @Arg("subscriptionRequestId", () => ID) subscriptionRequestId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<boolean> {
    return ctx.services.deliveries.oneRecord.enable(subscriptionRequestId);
  }
}
