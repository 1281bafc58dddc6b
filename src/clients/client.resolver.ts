import { GraphQLJSON } from "graphql-scalars";
import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { GraphQLContext } from "../graphql-core/context";
import {
  ApiClientType,
  CreatedClientType,
  IssuedApiKeyType,
  RotatedSigningSecretType,
  StationImportResultType,
} from "./client.types";
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from "./signing-secrets";

/** Operations for the carrier's operators (scope `admin`); the admin command line does the same. */
@Resolver()
export class ClientResolver {
  @Query(() => [ApiClientType], { description: "admin: every client and its keys (never the keys themselves)." })
  @Authorized("admin")
  async clients(@Ctx() ctx: GraphQLContext): Promise<ApiClientType[]> {
    return ctx.services.clients.listClients();
  }

  @Mutation(() => CreatedClientType, { description: "admin: a new client with its registered callback prefixes." })
  @Authorized("admin")
  async createClient(
    @Arg("name") name: string,
    @Arg("callbackPrefixes", () => [String]) callbackPrefixes: string[],
    @Ctx() ctx: GraphQLContext,
    @Arg("maxSubscriptions", () => Int, { nullable: true }) maxSubscriptions?: number | null,
  ): Promise<CreatedClientType> {
    return ctx.services.clients.createClient({
      name,
      callbackPrefixes,
      ...(maxSubscriptions ? { maxSubscriptions } : {}),
    });
  }

  @Mutation(() => IssuedApiKeyType, {
    description:
      "admin: a new API key for a client; scopes: subscriptions, events:read, events:write, objects:write, admin.",
  })
  @Authorized("admin")
  async issueApiKey(
    @Arg("clientId", () => ID) clientId: string,
    @Arg("scopes", () => [String]) scopes: string[],
    @Ctx() ctx: GraphQLContext,
    @Arg("label", () => String, { nullable: true }) label?: string | null,
  ): Promise<IssuedApiKeyType> {
    return ctx.services.clients.issueKey(clientId, scopes, label ?? null);
  }

  @Mutation(() => Boolean, { description: "admin: revokes a key at once on this instance, within seconds on others." })
  @Authorized("admin")
  async revokeApiKey(@Arg("keyId", () => ID) keyId: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.clients.revokeKey(keyId);
    return true;
  }

  @Mutation(() => RotatedSigningSecretType, {
    description:
      "admin: a new webhook signing secret for a client (shown this once); the replaced one keeps signing for graceSeconds.",
  })
  @Authorized("admin")
  async rotateSigningSecret(
    @Arg("clientId", () => ID) clientId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg("graceSeconds", () => Int, {
      nullable: true,
      description: `How long the replaced secret keeps signing, 0 to ${MAX_GRACE_SECONDS} (7 days); default ${DEFAULT_GRACE_SECONDS} (24 h); 0 ends it at once`,
    })
    graceSeconds?: number | null,
  ): Promise<RotatedSigningSecretType> {
    return ctx.services.clients.rotateSigningSecret(clientId, graceSeconds ?? DEFAULT_GRACE_SECONDS);
  }

  @Mutation(() => [String], {
    description: 'admin: replaces a client\'s registered callback prefixes ("*" for any URL).',
  })
  @Authorized("admin")
  async setCallbackPrefixes(
    @Arg("clientId", () => ID) clientId: string,
    @Arg("prefixes", () => [String]) prefixes: string[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return ctx.services.clients.setCallbackPrefixes(clientId, prefixes);
  }

  @Mutation(() => StationImportResultType, {
    description: "admin: validates a station file (as npm run stations:import) and replaces the station data set.",
  })
  @Authorized("admin")
  async importStations(
    @Arg("stations", () => GraphQLJSON) stations: unknown,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StationImportResultType> {
    return ctx.services.stations.importStations(stations);
  }
}
