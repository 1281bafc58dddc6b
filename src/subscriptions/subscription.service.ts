import type { Principal } from "../clients/principal";
import type { SqlExecutor } from "../db/database";
import { parseAwb } from "../domain/awb";
import { readIsoInstant } from "../domain/instant";
import { checkSubscriptionId, UUID_PATTERN } from "../domain/ids";
import { normaliseStates, type StateSelection, STATES_HINT } from "../domain/status";
import { AppError, type FieldError, validationError } from "../errors";
import { parseCallbackUrl } from "./callback-url";
import { createSubscriptionStore, type SubscriptionRow } from "./subscription.store";

export interface Subscription {
  id: string;
  /** "PPP-NNNNNNNN" */
  awb: string;
  callback: string;
  states: StateSelection;
  createdAt: Date;
  updatedAt: Date;
  /** After this nothing is sent and it no longer counts toward the cap; null: never. */
  expiresAt: Date | null;
  /** Set when delivery disabled it (every attempt failed for DELIVERY_DISABLE_AFTER); its owner enables it again. */
  disabledAt: Date | null;
  disabledReason: string | null;
}

/** What both transports hand in: REST after reading its body, GraphQL from its input type. */
export interface SubscriptionInput {
  awb: unknown;
  callback: unknown;
  /** Status codes (any case) or "*". */
  states: unknown;
  /** ISO 8601 instant with offset, in the future; absent or null: never expires. */
  expiresAt?: unknown;
}

export interface SubscriptionPage {
  items: Subscription[];
  /** Pass as `after` for the next page; null on the last page. */
  nextCursor: string | null;
}

export const MAX_PAGE_SIZE = 200;

const toSubscription = (row: SubscriptionRow): Subscription => ({
  ...row,
  states: row.states as unknown as StateSelection,
});

export function parseSubscriptionId(value: unknown, field = "subscriptionId"): string {
  const checked = checkSubscriptionId(value, field);
  if ("problem" in checked) throw validationError([checked.problem]);
  return checked.id;
}

/**
 * Checks that the service can deliver to a callback (CONTRACT §2, §5) and throws the AppError that
 * says why not. app.ts binds it to the outbound HTTP client (callback-verifier.ts over the guarded agent).
 */
export type CallbackVerifier = (
  callback: string,
  check: { prefixes: readonly string[]; allowPrivate: boolean },
) => Promise<unknown>;

/**
 * Subscriptions: one client's interest in one AWB's milestones, delivered to one callback. Every
 * operation is scoped to the calling client; another client's subscription is "not found".
 */
export function createSubscriptionService(deps: {
  sql: SqlExecutor;
  verifyCallback: CallbackVerifier;
  allowPrivateCallbacks: boolean;
  enforceCheckDigit: boolean;
}) {
  const { sql, verifyCallback, allowPrivateCallbacks, enforceCheckDigit } = deps;
  const store = createSubscriptionStore(sql);

  /** Field-level validation of an input, all problems at once (400). */
  function validate(input: SubscriptionInput): {
    awb: string;
    callback: string;
    states: StateSelection;
    expiresAt: Date | null;
  } {
    const problems: FieldError[] = [];
    let awb = "";
    if (typeof input.awb !== "string")
      problems.push({ field: "awb", message: `must be a string such as "020-12345675", got ${typeof input.awb}` });
    else {
      const parsed = parseAwb(input.awb);
      if (!parsed)
        problems.push({
          field: "awb",
          message: `must be a 3-digit prefix and an 8-digit serial ("020-12345675", "02012345675" or "020 12345675"), got ${JSON.stringify(input.awb.slice(0, 40))}`,
        });
      else if (enforceCheckDigit && !parsed.checkDigitValid)
        problems.push({
          field: "awb",
          message: `${parsed.canonical} has a wrong check digit (the serial's first seven digits mod 7 must equal its last digit)`,
        });
      else awb = parsed.canonical;
    }
    if (typeof input.callback !== "string" || input.callback.trim() === "")
      problems.push({ field: "callback", message: "must be a non-empty URL string" });
    let states: StateSelection = [];
    if (!Array.isArray(input.states) || input.states.some((s) => typeof s !== "string"))
      problems.push({ field: "states", message: "must list status codes" });
    else {
      const result = normaliseStates(input.states as string[]);
      if (result.unknown.length > 0)
        problems.push({
          field: "states",
          message: `unknown status code(s) ${result.unknown.map((c) => JSON.stringify(c)).join(", ")}: send ${STATES_HINT}`,
        });
      else if (result.states.length === 0)
        problems.push({ field: "states", message: "must name at least one status code, or *" });
      states = result.states;
    }
    let expiresAt: Date | null = null;
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const read = typeof input.expiresAt === "string" ? readIsoInstant(input.expiresAt) : null;
      if (read === null || "problem" in read)
        problems.push({
          field: "expiresAt",
          message: `${read === null ? "must be an ISO 8601 date-time with an offset" : read.problem}, e.g. "2027-01-31T00:00:00Z", or null`,
        });
      else if (read.at.getTime() <= Date.now()) problems.push({ field: "expiresAt", message: "must be in the future" });
      else expiresAt = read.at;
    }
    if (problems.length > 0) throw validationError(problems);
    return { awb, callback: (input.callback as string).trim(), states, expiresAt };
  }

  const notFound = (id: string) => new AppError("SUBSCRIPTION_NOT_FOUND", `No subscription ${id}`);

  async function rejectDuplicate(principal: Principal, awb: string, callback: string): Promise<void> {
    const existing = await store.existing(principal.clientId, awb, callback);
    if (existing !== null) throw subscriptionExists(existing, awb, callback);
  }

  return {
    validate,

    async create(principal: Principal, input: SubscriptionInput): Promise<Subscription> {
      const { awb, callback: raw, states, expiresAt } = validate(input);
      const callback = parseCallbackUrl(raw).href;
      const cap = principal.maxSubscriptions;
      // The checks in CONTRACT §2's order: the cheap ones in one statement before the callback check,
      // then one script that inserts under the cap again, which concurrent creates cannot race past.
      const standing = await store.standing(principal.clientId, awb, callback);
      if (standing.existing !== null) throw subscriptionExists(standing.existing, awb, callback);
      if (standing.count >= cap) throw limitReached(standing.count, cap);
      await verifyCallback(callback, { prefixes: principal.callbackPrefixes, allowPrivate: allowPrivateCallbacks });
      for (let attempt = 0; attempt < 3; attempt++) {
        const inserted = await store.insertWithinCap(principal.clientId, { awb, callback, states, expiresAt }, cap);
        if (inserted.kind === "created") return toSubscription(inserted.row);
        if (inserted.kind === "limit") throw limitReached(inserted.count, cap);
        // A concurrent create of the same (AWB, callback) won: name it (or, if already deleted, try again).
        await rejectDuplicate(principal, awb, callback);
      }
      throw new Error(`Could not create the subscription of ${awb} to ${callback}: it kept being created and deleted`);
    },

    async get(principal: Principal, id: unknown): Promise<Subscription> {
      const subscriptionId = parseSubscriptionId(id);
      const row = await store.find(principal.clientId, subscriptionId);
      if (!row) throw notFound(subscriptionId);
      return toSubscription(row);
    },

    async list(
      principal: Principal,
      filter: { awb?: unknown; callback?: unknown; first?: unknown; after?: unknown } = {},
    ): Promise<SubscriptionPage> {
      const problems: FieldError[] = [];
      let awb: string | undefined;
      if (filter.awb !== undefined && filter.awb !== null) {
        const parsed = typeof filter.awb === "string" ? parseAwb(filter.awb) : null;
        if (!parsed) problems.push({ field: "awb", message: "must be an AWB such as 020-12345675" });
        else awb = parsed.canonical;
      }
      let callback: string | undefined;
      if (filter.callback !== undefined && filter.callback !== null) {
        if (typeof filter.callback !== "string") problems.push({ field: "callback", message: "must be a URL" });
        else {
          try {
            callback = parseCallbackUrl(filter.callback).href;
          } catch {
            problems.push({ field: "callback", message: "must be an absolute http(s) URL" });
          }
        }
      }
      const first = filter.first === undefined || filter.first === null ? 50 : Number(filter.first);
      if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE)
        problems.push({ field: "first", message: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` });
      let after: { createdAt: Date; id: string } | undefined;
      if (filter.after !== undefined && filter.after !== null) {
        after = decodeCursor(filter.after);
        if (!after) problems.push({ field: "after", message: "is not a cursor this service issued" });
      }
      if (problems.length > 0) throw validationError(problems);
      const rows = await store.list(principal.clientId, { awb, callback }, after, first + 1);
      const items = rows.slice(0, first).map(toSubscription);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > first && last ? encodeCursor(last) : null };
    },

    /** Full replacement. The callback is verified again only when it changes. */
    async update(principal: Principal, id: unknown, input: SubscriptionInput): Promise<Subscription> {
      const subscriptionId = parseSubscriptionId(id);
      const { awb, callback: raw, states, expiresAt } = validate(input);
      const fields = { awb, callback: parseCallbackUrl(raw).href, states, expiresAt };
      // One statement when the callback stays; when it changes, its check comes between that
      // statement (which then writes nothing) and the write.
      let outcome = await store.updateKeepingCallback(principal.clientId, subscriptionId, fields);
      if (outcome.kind === "callbackDiffers") {
        if (fields.callback !== outcome.current)
          await verifyCallback(fields.callback, {
            prefixes: principal.callbackPrefixes,
            allowPrivate: allowPrivateCallbacks,
          });
        outcome = await store.replace(principal.clientId, subscriptionId, fields);
      }
      if (outcome.kind === "missing") throw notFound(subscriptionId);
      if (outcome.kind === "duplicate") throw subscriptionExists(outcome.existing, awb, fields.callback);
      return toSubscription(outcome.row);
    },

    /** Clears what delivery's auto-disable set; enabling an enabled subscription changes nothing. */
    async enable(principal: Principal, id: unknown): Promise<Subscription> {
      const subscriptionId = parseSubscriptionId(id);
      const row = await store.enable(principal.clientId, subscriptionId);
      if (!row) throw notFound(subscriptionId);
      return toSubscription(row);
    },

    async remove(principal: Principal, id: unknown): Promise<Subscription> {
      const subscriptionId = parseSubscriptionId(id);
      const row = await store.remove(principal.clientId, subscriptionId);
      if (!row) throw notFound(subscriptionId);
      return toSubscription(row);
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;

function subscriptionExists(id: string, awb: string, callback: string): AppError {
  return new AppError("SUBSCRIPTION_EXISTS", `Subscription ${id} already sends ${awb} to ${callback}`, {
    extensions: { subscriptionId: id },
  });
}

function limitReached(count: number, limit: number): AppError {
  return new AppError(
    "SUBSCRIPTION_LIMIT_REACHED",
    `This client has ${count} subscriptions, its limit; delete some first`,
    {
      extensions: { limit },
    },
  );
}

function encodeCursor(s: Subscription): string {
  return Buffer.from(`${s.createdAt.toISOString()}|${s.id}`).toString("base64url");
}

function decodeCursor(value: unknown): { createdAt: Date; id: string } | undefined {
  if (typeof value !== "string") return undefined;
  const [at, id] = Buffer.from(value, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (Number.isNaN(createdAt.getTime()) || !id || !UUID_PATTERN.test(id)) return undefined;
  return { createdAt, id };
}
