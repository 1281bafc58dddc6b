import { Ctx, Query, Resolver } from "type-graphql";
import type { GraphQLContext } from "../graphql-core/context";
import { Health } from "./health.types";

@Resolver()
export class HealthResolver {
  @Query(() => Health, { description: "Readiness of this instance, as GET /readyz reports it." })
  async health(@Ctx() ctx: GraphQLContext): Promise<Health> {
    return ctx.services.health.readiness();
  }
}
