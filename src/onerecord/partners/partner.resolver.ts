import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { GraphQLContext } from "../../graphql-core/context";
import { OneRecordPartnerType } from "./partner.types";

/**
 * The operator's registry of ONE Record partners (scope `admin`), on the running gateway: what
 * `npm run admin -- partner:add`, `partner:remove` and `partners` do, without stopping it.
 */
@Resolver()
export class OneRecordPartnerResolver {
  @Query(() => [OneRecordPartnerType], { description: "admin: the registered ONE Record partners." })
  @Authorized("admin")
  async oneRecordPartners(@Ctx() ctx: GraphQLContext): Promise<OneRecordPartnerType[]> {
    return ctx.services.oneRecordPartners.list();
  }

  @Mutation(() => OneRecordPartnerType, {
    description:
      "admin: registers (or registers again, replacing) a ONE Record partner: its server, and its API client or its OIDC agent's Organization URI.",
  })
  @Authorized("admin")
  async registerOneRecordPartner(
    @Arg("serverUrl") serverUrl: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("clientId", () => ID, { nullable: true }) clientId?: string | null,
    @Arg("agentUri", () => String, { nullable: true }) agentUri?: string | null,
    @Arg("proposeSubscriptions", () => Boolean, { nullable: true }) proposeSubscriptions?: boolean | null,
    @Arg("announceObjects", () => Boolean, { nullable: true }) announceObjects?: boolean | null,
    @Arg("audience", () => String, { nullable: true }) audience?: string | null,
  ): Promise<OneRecordPartnerType> {
    return ctx.services.oneRecordPartners.add({
      serverUrl,
      clientId: clientId ?? undefined,
      agentUri: agentUri ?? undefined,
      proposeSubscriptions: proposeSubscriptions ?? false,
      announceObjects: announceObjects ?? false,
      audience: audience ?? undefined,
    });
  }

  @Mutation(() => Boolean, {
    description:
      "admin: removes the partner named by its Organization, agent URI or client id; false when there was none.",
  })
  @Authorized("admin")
  async removeOneRecordPartner(@Arg("partner") partner: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return ctx.services.oneRecordPartners.remove(partner);
  }
}
