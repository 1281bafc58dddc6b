import { type AuthCheckerFn, Extensions, getMetadataStorage, type SubscribeResolverData } from "type-graphql";
import { isScope, type Scope } from "../clients/credentials";
import { type Principal, requireScope } from "../clients/principal";
import type { GraphQLContext } from "./context";

/**
 * Every root field and field resolver declares who may read it: `@Authorized("scope", …)` from
 * type-graphql (a key holding one of the scopes, checked by `authChecker` before the resolver runs,
 * over HTTP and websockets alike), `@Public()` (no key), or for a subscription field its
 * `subscribe: authorizedSubscribe(scopes, …)`. `buildGatewaySchema` refuses a schema with a field
 * that declares none.
 */
export type FieldAccess = readonly [Scope, ...Scope[]] | "public";

const PUBLIC_EXTENSION = "auth";

/** Marks a field anyone may read, without a key. */
export const Public = () => Extensions({ [PUBLIC_EXTENSION]: "public" });

/** The one auth checker given to type-graphql: throws the error table's UNAUTHENTICATED or INSUFFICIENT_SCOPE. */
export const authChecker: AuthCheckerFn<GraphQLContext, Scope> = async ({ context }, scopes) => {
  // An empty list (`@Authorized()`) admits nobody: `declaredFieldAccess` reports it as undeclared.
  requireScope(await context.auth(), ...(scopes as [Scope, ...Scope[]]));
  return true;
};

const subscribeScopes = new WeakMap<object, readonly [Scope, ...Scope[]]>();

/**
 * A subscription field's `subscribe`, answered only once `authChecker` admits the caller for `scopes`.
 * The arguments are checked first (`subscribe` runs before the caller is looked up): a malformed
 * subscription is VALIDATION_FAILED whoever sends it and spends no key lookup or rate token. So
 * `subscribe` MUST only check and build (the resolvers return a feed the transport starts later).
 * `@Authorized` would also check each event's rendering, which has no caller (one rendering serves
 * every subscriber of an operation: live/live-operations.ts) and must stay synchronous.
 */
export function authorizedSubscribe<Data extends SubscribeResolverData<unknown, object, GraphQLContext>, Result>(
  scopes: readonly [Scope, ...Scope[]],
  subscribe: (data: Data) => Result,
): (data: Data) => Promise<Result> {
  const checked = async (data: Data) => {
    const result = subscribe(data);
    await authChecker({ root: data.source, args: data.args, context: data.context, info: data.info }, [...scopes]);
    return result;
  };
  subscribeScopes.set(checked, scopes);
  return checked;
}

/** The caller the field's `@Authorized` check admitted (`ctx.auth()` resolves once per request). */
export async function callerOf(ctx: GraphQLContext): Promise<Principal> {
  const principal = await ctx.auth();
  if (!principal) throw new Error("callerOf: the field declares no @Authorized scope");
  return principal;
}

/**
 * What each root field ("Query.x", "Mutation.x", "Subscription.x") and field resolver ("Type.x") of
 * `resolvers` declares; undefined for one that declares nothing, more than one, `@Authorized` without
 * a known scope, or `@Authorized` on a subscription field.
 */
export function declaredFieldAccess(resolvers: readonly object[]): Map<string, FieldAccess | undefined> {
  const storage = getMetadataStorage();
  const ours = (handler: { target: object }) => resolvers.includes(handler.target);
  const typeNameOf = (resolver: object) => {
    const objectType = storage.resolverClasses.find((r) => r.target === resolver)?.getObjectType();
    return storage.objectTypes.find((t) => t.target === objectType)?.name ?? "?";
  };
  const handlers: Array<
    readonly [string, { target: object; methodName: string; schemaName: string; subscribe?: unknown }]
  > = [
    ...storage.queries.filter(ours).map((h) => ["Query", h] as const),
    ...storage.mutations.filter(ours).map((h) => ["Mutation", h] as const),
    ...storage.subscriptions.filter(ours).map((h) => ["Subscription", h] as const),
    ...storage.fieldResolvers.filter(ours).map((h) => [typeNameOf(h.target), h] as const),
  ];
  return new Map(
    handlers.map(([type, { target, methodName, schemaName, subscribe }]) => {
      const subscribes = typeof subscribe === "function" ? subscribeScopes.get(subscribe) : undefined;
      const scopes = (
        storage.authorizedFields.find((a) => a.target === target && a.fieldName === methodName) ??
        storage.authorizedResolver.find((a) => a.target === target)
      )?.roles as string[] | undefined;
      const isPublic = storage.fieldExtensions.some(
        (e) => e.target === target && e.fieldName === methodName && e.extensions[PUBLIC_EXTENSION] === "public",
      );
      let access: FieldAccess | undefined;
      if (type === "Subscription") access = subscribes && !scopes && !isPublic ? subscribes : undefined;
      else if (scopes && scopes.length > 0 && scopes.every(isScope) && !isPublic)
        access = scopes as [Scope, ...Scope[]];
      else if (!scopes && isPublic) access = "public";
      return [`${type}.${schemaName}`, access];
    }),
  );
}
