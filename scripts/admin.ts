// npm run admin -- <command> [options]: manage clients, API keys, signing secrets and callback prefixes.
// Uses the server's configuration (DATABASE_URL, or the embedded database under DATA_DIR), and names the
// database it opened on its first line; with the embedded database, stop the server first or use the
// GraphQL admin operations. On a new database it creates the first client and shows its credentials once.
import "reflect-metadata";
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { type ClientService, createClientService } from "../src/clients/client.service";
import { createSecretBox, loadSecretsKey } from "../src/clients/secret-box";
import { DEFAULT_GRACE_SECONDS } from "../src/clients/signing-secrets";
import { databaseKindOf, loadConfigOrExit, printFirstStart, printProblems, runCli } from "../src/cli";
import { openConfiguredDatabase } from "../src/db/database";
import { AppError } from "../src/errors";
import { createLogger } from "../src/log";
import { createOperatorGrants } from "../src/onerecord/identity/operator-grants";
import { createPartnerAdmin, type PartnerAdmin } from "../src/onerecord/partners/partner-admin";
import {
  createReceivedNotifications,
  MAX_LISTED,
  type ReceivedNotifications,
} from "../src/onerecord/notifications-in/received-notifications";
import {
  createSubscriptionWishes,
  type SubscriptionWishes,
} from "../src/onerecord/notifications-in/subscription-wishes";

const USAGE = `usage: npm run admin -- <command> [options]

  clients                                              list clients and their keys (never the keys themselves)
  client:create --name <name> --prefixes <p1,p2> [--max-subscriptions <n>]
                                                       create a client; prints its id and signing secret once
  key:issue --client <id> --scopes <s1,s2> [--label <text>]
                                                       issue an API key; printed once, only its hash is kept
                                                       scopes: subscriptions, events:read, events:write, objects:write, admin
  key:revoke --key <key id>                            revoke a key
  secret:rotate --client <id> [--grace <seconds>]      new webhook signing secret; printed once. The replaced
                                                       one keeps signing too for --grace seconds (default
                                                       86400 = 24 h, at most 604800 = 7 days; 0: ends at once)
  prefixes:set --client <id> --prefixes <p1,p2>        replace the registered callback prefixes ("*": any URL)
  object:grant --object <id> --organization <id|URI> [--may-pass-on]
                                                       give an Organization ("organization-<client id>", or an
                                                       agent's URI) read access to a ONE Record logistics
                                                       object, on its creator's behalf; --may-pass-on: it
                                                       may delegate that access further (default: not)
  object:revoke --object <id> --organization <id|URI>  withdraw it
  partner:add --server <URL> (--client <id> | --agent <URI>) [--propose] [--announce] [--audience <aud>]
                                                       register a ONE Record partner's server: its notifications
                                                       go to <URL>/notifications (to no server not registered);
                                                       --propose: offer it subscriptions to its AWBs (its GET
                                                       <URL>/subscriptions); --announce: tell it of new AWB
                                                       objects; --audience: the audience of the tokens it is
                                                       sent (else ONE_RECORD_TOKEN_AUDIENCE's, one token for all
                                                       partners without one). Again: replaces
  partner:remove (--client <id> | --agent <URI>)       forget a partner
  partners                                             list the registered partners
  onerecord:want --topic-type <LOGISTICS_OBJECT_TYPE|LOGISTICS_OBJECT_IDENTIFIER> --topic <class IRI|URI prefix|*>
                 --events <E1,E2> [--send-body] [--description <text>]
                                                       subscribe to that when another ONE Record publisher
                                                       proposes it (its GET /subscriptions); events among
                                                       LOGISTICS_OBJECT_CREATED, LOGISTICS_OBJECT_UPDATED,
                                                       LOGISTICS_EVENT_RECEIVED. Again: replaces
  onerecord:unwant --topic-type <type> --topic <class IRI|URI prefix|*>
                                                       subscribe to it no longer when proposed
  onerecord:wants                                      list what this server subscribes to when proposed
  notifications [--since <ISO 8601 time>] [--limit <n>] [--bodies]
                                                       the ONE Record notifications other servers sent here,
                                                       oldest first (default the last day, at most 100;
                                                       --limit up to ${MAX_LISTED}); --bodies: each as JSON-LD`;

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

async function run(
  command: string,
  options: Record<string, string | undefined>,
  clients: ClientService,
  objects: ReturnType<typeof createOperatorGrants>,
  partners: PartnerAdmin,
  subscriber: { wishes: SubscriptionWishes; received: ReceivedNotifications },
): Promise<void> {
  const need = (name: string): string => {
    const value = options[name];
    if (!value) throw new UsageError(`${command} needs --${name}`);
    return value;
  };
  switch (command) {
    case "clients":
      for (const c of await clients.listClients()) {
        console.log(
          `${c.id}  ${c.name}  prefixes: ${c.callbackPrefixes.join(", ")}  max subscriptions: ${c.maxSubscriptions}`,
        );
        for (const k of c.keys)
          console.log(
            `    key ${k.id}  ${k.lookupPrefix}…  ${k.scopes.join(",")}${k.label ? `  "${k.label}"` : ""}${k.revokedAt ? `  revoked ${k.revokedAt.toISOString()}` : ""}`,
          );
      }
      return;
    case "client:create": {
      const max = options["max-subscriptions"];
      const created = await clients.createClient({
        name: need("name"),
        callbackPrefixes: list(need("prefixes")),
        ...(max ? { maxSubscriptions: Number(max) } : {}),
      });
      console.log(`client ${created.clientId}\nsigning secret (shown once): ${created.signingSecret}`);
      return;
    }
    case "key:issue": {
      const issued = await clients.issueKey(need("client"), list(need("scopes")), options.label ?? null);
      console.log(`key id ${issued.keyId}\nAPI key (shown once): ${issued.key}`);
      return;
    }
    case "key:revoke":
      await clients.revokeKey(need("key"));
      console.log("revoked");
      return;
    case "secret:rotate": {
      const grace = options.grace;
      // Checked here as text: Number("") is 0, which would end the old secret at once by a typo.
      if (grace !== undefined && !/^\d+$/.test(grace))
        throw new UsageError(`--grace must be a whole number of seconds, got "${grace}"`);
      const rotated = await clients.rotateSigningSecret(
        need("client"),
        grace === undefined ? DEFAULT_GRACE_SECONDS : Number(grace),
      );
      console.log(`signing secret (shown once): ${rotated.signingSecret}`);
      console.log(
        rotated.previousSecretExpiresAt.getTime() > Date.now()
          ? `previous secret signs too until ${rotated.previousSecretExpiresAt.toISOString()}`
          : "previous secret ended now",
      );
      return;
    }
    case "prefixes:set":
      console.log(
        `prefixes: ${(await clients.setCallbackPrefixes(need("client"), list(need("prefixes")))).join(", ")}`,
      );
      return;
    case "object:grant": {
      const mayPassOn = Boolean(options["may-pass-on"]);
      const grantee = await objects.grant(need("object"), need("organization"), { mayPassOn });
      console.log(`granted ${grantee} read access${mayPassOn ? ", to be passed on" : ""}`);
      return;
    }
    case "object:revoke":
      console.log(`withdrew ${await objects.revoke(need("object"), need("organization"))}'s read access`);
      return;
    // ONE Record partners (docs/ONE-RECORD.md "Partner servers").
    case "partner:add": {
      const added = await partners.add({
        serverUrl: need("server"),
        clientId: options.client,
        agentUri: options.agent,
        proposeSubscriptions: Boolean(options.propose),
        announceObjects: Boolean(options.announce),
        audience: options.audience,
      });
      console.log(`partner ${added.organization}: notifications to ${added.serverUrl}/notifications${offers(added)}`);
      return;
    }
    case "partner:remove": {
      const partner = options.client ?? options.agent;
      if (!partner || (options.client && options.agent))
        throw new UsageError("partner:remove needs --client or --agent");
      if (!(await partners.remove(partner))) throw new AppError("NOT_FOUND", `No partner ${partner}`);
      console.log("removed");
      return;
    }
    case "partners":
      for (const p of await partners.list())
        console.log(`${p.organization}  ${p.serverUrl}${offers(p)}  since ${p.createdAt.toISOString()}`);
      return;
    // The gateway as a ONE Record subscriber (docs/ONE-RECORD.md "Receiving notifications").
    case "onerecord:want": {
      const wish = await subscriber.wishes.want({
        topicType: need("topic-type"),
        topic: need("topic"),
        events: list(need("events")),
        sendBody: Boolean(options["send-body"]),
        description: options.description ?? null,
      });
      console.log(`wanted: ${describeWish(wish)}`);
      return;
    }
    case "onerecord:unwant":
      await subscriber.wishes.unwant(need("topic-type"), need("topic"));
      console.log("removed");
      return;
    case "onerecord:wants":
      for (const wish of await subscriber.wishes.list()) console.log(describeWish(wish));
      return;
    case "notifications": {
      const since = options.since === undefined ? new Date(Date.now() - 86_400_000) : new Date(options.since);
      if (Number.isNaN(since.getTime()))
        throw new UsageError(`--since must be an ISO 8601 time such as 2026-11-25T10:00:00Z, got "${options.since}"`);
      const limit = options.limit === undefined ? 100 : Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LISTED)
        throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LISTED}, got "${options.limit}"`);
      for (const n of await subscriber.received.list({ since, limit })) {
        console.log(
          `${n.receivedAt.toISOString()}  ${n.eventType}  ${n.logisticsObject ?? "-"}  from ${n.sender}${n.notificationId === null ? "" : `  id ${n.notificationId}`}`,
        );
        if (options.bodies) console.log(`    ${JSON.stringify(n.body)}`);
      }
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

class UsageError extends Error {}

/** A wish as onerecord:want and onerecord:wants show it. */
function describeWish(wish: {
  topicType: string;
  topic: string;
  eventTypes: readonly string[];
  sendBody: boolean;
  description: string | null;
}): string {
  const topic = wish.topic === "" ? "(any object)" : wish.topic;
  return `${wish.topicType} ${topic}  events: ${wish.eventTypes.join(", ")}${wish.sendBody ? "  with bodies" : ""}${wish.description === null ? "" : `  "${wish.description}"`}`;
}

/** What a partner is offered unasked, as partner:add and partners show it. */
function offers(partner: { proposeSubscriptions: boolean; announceObjects: boolean; audience: string | null }): string {
  const offered = [
    ...(partner.audience === null ? [] : [`tokens for ${partner.audience}`]),
    ...(partner.proposeSubscriptions ? ["subscriptions proposed"] : []),
    ...(partner.announceObjects ? ["new objects announced"] : []),
  ];
  return offered.length > 0 ? ` (${offered.join(", ")})` : "";
}

function describeDatabase(
  config: { databaseUrl: string | undefined; dataDir: string },
  embeddedIsNew: boolean,
): string {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    return `database: PostgreSQL ${url.host}${url.pathname} (DATABASE_URL)`;
  }
  return embeddedIsNew
    ? `database: a NEW embedded database at ${config.dataDir} (DATA_DIR): if your gateway keeps its data elsewhere, run this again with its DATA_DIR or DATABASE_URL`
    : `database: embedded, at ${config.dataDir} (DATA_DIR)`;
}

/** What to use instead of a command while the gateway holds the embedded database: its GraphQL API (scope admin). */
const ADVICE: Record<string, string> = {
  clients: "use its GraphQL query clients",
  "client:create": "use its GraphQL mutation createClient",
  "key:issue": "use its GraphQL mutation issueApiKey",
  "key:revoke": "use its GraphQL mutation revokeApiKey",
  "secret:rotate": "use its GraphQL mutation rotateSigningSecret",
  "prefixes:set": "use its GraphQL mutation setCallbackPrefixes",
  "object:grant": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "object:revoke": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "partner:add": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "partner:remove": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  partners: "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "onerecord:want": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "onerecord:unwant": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  "onerecord:wants": "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
  notifications: "run it on PostgreSQL (DATABASE_URL), where this command works while it runs",
};

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        name: { type: "string" },
        prefixes: { type: "string" },
        "max-subscriptions": { type: "string" },
        client: { type: "string" },
        scopes: { type: "string" },
        label: { type: "string" },
        key: { type: "string" },
        grace: { type: "string" },
        object: { type: "string" },
        organization: { type: "string" },
        "may-pass-on": { type: "boolean" },
        server: { type: "string" },
        agent: { type: "string" },
        propose: { type: "boolean" },
        announce: { type: "boolean" },
        audience: { type: "string" },
        "topic-type": { type: "string" },
        topic: { type: "string" },
        events: { type: "string" },
        "send-body": { type: "boolean" },
        description: { type: "string" },
        since: { type: "string" },
        limit: { type: "string" },
        bodies: { type: "boolean" },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (!command) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfigOrExit(process.env);
  // Said first, so that a command run without the gateway's settings cannot pass for one on its data.
  const embeddedIsNew = !config.databaseUrl && !existsSync(path.join(config.dataDir, "PG_VERSION"));
  console.log(describeDatabase(config, embeddedIsNew));
  const database = await openConfiguredDatabase(
    config,
    `stop it and run this again, or ${ADVICE[command] ?? "use its GraphQL API (scope admin)"}`,
  );
  try {
    const clients = createClientService({
      prisma: database.prisma,
      log: createLogger("warn"),
      secrets: createSecretBox(loadSecretsKey(config).key),
    });
    await clients.prepareSecrets();
    const bootstrap = await clients.ensureBootstrapClient(config.bootstrap);
    if (bootstrap.created) printFirstStart(bootstrap, { byAdminCommand: true }, databaseKindOf(config));
    await run(
      command,
      parsed.values as Record<string, string | undefined>,
      clients,
      createOperatorGrants(database.prisma, config.oneRecord.baseUrl),
      createPartnerAdmin(database.prisma, config.oneRecord.baseUrl),
      {
        wishes: createSubscriptionWishes(database.prisma),
        received: createReceivedNotifications(database.prisma),
      },
    );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof AppError) {
      printProblems(error);
      return 1;
    }
    throw error;
  } finally {
    await database.close();
  }
}

runCli(main);
