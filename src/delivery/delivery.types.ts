import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType("DeliveryAttempt")
export class DeliveryAttemptType {
  @Field() startedAt!: Date;
  @Field(() => Int) durationMs!: number;
  @Field(() => Int, { nullable: true }) statusCode!: number | null;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType("Delivery", {
  description: "One notification of one milestone to one subscription's callback; deliveryId is the webhook-id.",
})
export class DeliveryType {
  @Field(() => ID) deliveryId!: string;
  @Field(() => ID, { nullable: true }) subscriptionId!: string | null;
  @Field(() => ID) eventId!: string;
  @Field(() => String, { nullable: true, description: "The eventId the ingesting caller gave, or null." })
  clientEventId!: string | null;
  @Field() callback!: string;
  @Field({
    description:
      "PENDING, DELIVERED, DEAD or PARKED (its subscription is disabled: not attempted until its owner enables it, then PENDING and due at once)",
  })
  status!: string;
  @Field(() => Int) attemptCount!: number;
  @Field(() => Date, { nullable: true, description: "PENDING only: when the next attempt is due" })
  nextAttemptAt!: Date | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field({ description: "The JSON body sent" }) payload!: string;
  @Field(() => [DeliveryAttemptType]) attempts!: DeliveryAttemptType[];
}

@ObjectType("OneRecordDelivery", {
  description:
    "One ONE Record api:Notification to one subscriber's notifications endpoint; deliveryId is its Notification-Id.",
})
export class OneRecordDeliveryType {
  @Field(() => ID) deliveryId!: string;
  @Field(() => ID, {
    nullable: true,
    description: "The SubscriptionRequest notified; null for announcements and notifications of a request's status",
  })
  subscriptionRequestId!: string | null;
  @Field(() => ID, { nullable: true, description: "The milestone it notifies of, when it is one" })
  eventId!: string | null;
  @Field({ description: "The subscriber's notifications endpoint" }) endpoint!: string;
  @Field({
    description:
      "PENDING, DELIVERED, DEAD or PARKED (its subscription is disabled: not attempted until an operator enables it)",
  })
  status!: string;
  @Field(() => Int) attemptCount!: number;
  @Field(() => Date, { nullable: true, description: "PENDING only: when the next attempt is due" })
  nextAttemptAt!: Date | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field({ description: "The api:Notification sent (JSON-LD)" }) payload!: string;
  @Field(() => [DeliveryAttemptType]) attempts!: DeliveryAttemptType[];
}
