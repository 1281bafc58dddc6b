import "reflect-metadata";
import { createPubSub } from "@graphql-yoga/subscription";
import { type GraphQLSchema, lexicographicSortSchema, printSchema } from "graphql";
import { buildSchema, type PubSub } from "type-graphql";
import { ClientResolver } from "../clients/client.resolver";
import { authChecker, declaredFieldAccess } from "../graphql-core/authorization";
import { HealthResolver } from "../health/health.resolver";
import { LiveResolver } from "../live/live.resolver";
import { MilestoneResolver } from "../milestones/milestone.resolver";
import { OneRecordPartnerResolver } from "../onerecord/partners/partner.resolver";
import { DeliveryResolver } from "../delivery/delivery.resolver";
import { StationResolver } from "../stations/station.resolver";
import { SubscriptionResolver } from "../subscriptions/subscription.resolver";

export const RESOLVERS = [
  HealthResolver,
  StationResolver,
  SubscriptionResolver,
  MilestoneResolver,
  DeliveryResolver,
  LiveResolver,
  ClientResolver,
  OneRecordPartnerResolver,
] as const;

/** The schema every transport serves; refused when a field declares no access (graphql-core/authorization.ts). */
export async function buildGatewaySchema(pubSub: PubSub): Promise<GraphQLSchema> {
  const undeclared = [...declaredFieldAccess(RESOLVERS)].filter(([, access]) => !access).map(([field]) => field);
  if (undeclared.length > 0)
    throw new Error(`GraphQL fields without @Authorized(scope) or @Public(): ${undeclared.join(", ")}`);
  return buildSchema({ resolvers: RESOLVERS, pubSub, validate: false, authChecker });
}

/** The SDL committed as schema.graphql (a test keeps the two equal). */
export async function printGatewaySchema(): Promise<string> {
  const schema = await buildGatewaySchema(createPubSub());
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
