import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import fastifyApollo, { fastifyApolloDrainPlugin } from "@as-integrations/fastify";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "pino";
import type { GraphQLContext } from "./context";
import { formatGraphQLError } from "./errors";

/** Apollo Server at POST /graphql on the Fastify instance; `onDrain` runs when Apollo stops. */
export async function mountApollo(options: {
  app: FastifyInstance;
  schema: GraphQLSchema;
  log: Logger;
  introspection: boolean;
  createContext: (request: FastifyRequest) => Promise<GraphQLContext>;
  onDrain: () => Promise<void>;
}): Promise<ApolloServer<GraphQLContext>> {
  const { app, schema, log, introspection, createContext, onDrain } = options;
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection,
    includeStacktraceInErrorResponses: false,
    // The default landing page loads Apollo's sandbox from the internet; the IDE is served by us.
    plugins: [
      fastifyApolloDrainPlugin(app),
      ApolloServerPluginLandingPageDisabled(),
      { async serverWillStart() { return { drainServer: onDrain }; } },
    ],
    formatError: (formatted, error) => formatGraphQLError(formatted, error, (cause) => log.error({ err: cause }, "graphql resolver failed")),
  });
  await apollo.start();
  await app.register(fastifyApollo(apollo), { path: "/graphql", method: ["GET", "POST", "OPTIONS"], context: createContext });
  return apollo;
}
