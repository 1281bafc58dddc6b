import { Ctx, Query, Resolver } from "type-graphql";
import { Public } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import { Health } from "./health.types";

@Resolver()
export class HealthResolver {
  @Query(() => Health, { description: "Readiness of this instance, as GET /readyz reports it." })
  @Public()
  async health(@Ctx() ctx: GraphQLContext): Promise<Health> {
    return ctx.services.health.readiness();
  }
}
