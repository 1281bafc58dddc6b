import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { callerOf } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { AppError } from "../errors";
import {
  DeliveryCountsType,
  SubscriptionInputType,
  SubscriptionPageType,
  SubscriptionType,
  toStoredCode,
} from "./subscription.types";

const asInput = (input: SubscriptionInputType) => ({
  awb: input.awb,
  callback: input.callback,
  states: input.states.map(toStoredCode),
  expiresAt: input.expiresAt?.toISOString() ?? null,
});

@Resolver(() => SubscriptionType)
export class SubscriptionResolver {
  @Query(() => SubscriptionType, {
    nullable: true,
    description: "One of the caller's subscriptions; null when it has none with this id.",
  })
  @Authorized("subscriptions")
  async subscription(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<SubscriptionType | null> {
    const principal = await callerOf(ctx);
    try {
      return new SubscriptionType(await ctx.services.subscriptions.get(principal, id));
    } catch (error) {
      if (error instanceof AppError && error.code === "SUBSCRIPTION_NOT_FOUND") return null;
      throw error;
    }
  }

  @Query(() => SubscriptionPageType, { description: "The caller's subscriptions, oldest first, filtered and paged." })
  @Authorized("subscriptions")
  async subscriptions(
    @Ctx() ctx: GraphQLContext,
    @Arg("awb", () => String, { nullable: true }) awb?: string | null,
    @Arg("callback", () => String, { nullable: true }) callback?: string | null,
    @Arg("first", () => Int, { defaultValue: 50, description: "1 to 200" }) first?: number,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<SubscriptionPageType> {
    const principal = await callerOf(ctx);
    const page = await ctx.services.subscriptions.list(principal, { awb, callback, first, after });
    return { items: page.items.map((s) => new SubscriptionType(s)), nextCursor: page.nextCursor };
  }

  @FieldResolver(() => DeliveryCountsType, {
    description: "Notifications of this subscription by state (batched per request).",
  })
  @Authorized("subscriptions")
  deliveryCounts(@Root() subscription: SubscriptionType, @Ctx() ctx: GraphQLContext): Promise<DeliveryCountsType> {
    return ctx.loaders.deliveryCounts.load(subscription.subscriptionId);
  }

  @Mutation(() => SubscriptionType, {
    description: "Verifies the callback (OPTIONS must allow POST), then subscribes.",
  })
  @Authorized("subscriptions")
  async createSubscription(
    @Arg("input", () => SubscriptionInputType) input: SubscriptionInputType,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SubscriptionType> {
    const principal = await callerOf(ctx);
    return new SubscriptionType(await ctx.services.subscriptions.create(principal, asInput(input)));
  }

  @Mutation(() => SubscriptionType, { description: "Full replacement; a changed callback is verified again." })
  @Authorized("subscriptions")
  async updateSubscription(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => SubscriptionInputType) input: SubscriptionInputType,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SubscriptionType> {
    const principal = await callerOf(ctx);
    return new SubscriptionType(await ctx.services.subscriptions.update(principal, id, asInput(input)));
  }

  @Mutation(() => SubscriptionType, { description: "Deletes the subscription and returns it as it was." })
  @Authorized("subscriptions")
  async deleteSubscription(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<SubscriptionType> {
    const principal = await callerOf(ctx);
    return new SubscriptionType(await ctx.services.subscriptions.remove(principal, id));
  }

  @Mutation(() => SubscriptionType, {
    description:
      "Enables a subscription that delivery disabled (disabledAt set): it matches milestones again and its parked notifications are sent.",
  })
  @Authorized("subscriptions")
  async enableSubscription(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<SubscriptionType> {
    const principal = await callerOf(ctx);
    return new SubscriptionType(await ctx.services.subscriptions.enable(principal, id));
  }
}
