import { type Dispatcher, request } from "undici";
import { parseRetryAfter } from "../../delivery/backoff";
import { decodeJsonText } from "../../http/json-body";
import { BodyTooLarge, readBoundedBody } from "../../outbound/bounded-body";
import { describeRequestFailure } from "../../outbound/request-failure";
import type { TokenClient } from "../../outbound/token-client";
import { readJsonLdNodes } from "../jsonld-codec";
import { API } from "../jsonld-context";
import { type AcceptedSubscription, readProposalAnswer } from "./proposal-answer";

/** What asking a partner for the subscription it wants came to. */
export type ProposalAnswer =
  /** It answered subscriptions for the topic (each checked): record them. */
  | {
      readonly kind: "subscribed";
      readonly subscriptions: readonly AcceptedSubscription[];
      readonly refused: readonly string[];
    }
  /** It wants none: 200 with no (valid-for-us) subscription, or 422. Done, nothing recorded. */
  | { readonly kind: "declined"; readonly reason: string }
  /** It refused the question or answered what this server cannot take: failed for good. */
  | { readonly kind: "refused"; readonly reason: string }
  /** No answer this time (5xx, a timeout, the network, the token endpoint, 401, 408, 429): asked again later. */
  | { readonly kind: "unavailable"; readonly reason: string; readonly retryAfterMs?: number };

export interface ProposalQuestion {
  /** The partner's ONE Record server (onerecord_partner.server_url). */
  readonly serverUrl: string;
  /** The topic's URI: this server's object. */
  readonly topic: string;
  /** The partner's Organization URI as this server names it. */
  readonly partnerUri: string;
  /** The audience of the tokens the partner is sent (onerecord_partner.audience); undefined: the default. */
  readonly audience?: string | undefined;
}

export interface PartnerClientDeps {
  /** The guarded agent (outbound/guarded-agent.ts): the callbacks' address policy applies to partners too. */
  dispatcher?: Dispatcher;
  /** The OIDC client-credentials tokens this server calls other ONE Record servers with; none: no Authorization. */
  tokens?: Pick<TokenClient, "token" | "invalidate"> | undefined;
  timeoutMs?: number;
  now?: () => Date;
}

const MEDIA_TYPE = "application/ld+json; version=2.3.0";
const USER_AGENT = "cargo-gateway/1.0 (ONE Record subscription proposal)";
const DEFAULT_TIMEOUT_MS = 10_000;
/** A partner asked to wait longer is asked again after an hour at the latest. */
const MAX_RETRY_AFTER_MS = 3_600_000;
/** The most of an answer this server reads: a list of subscriptions is small. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
const IDENTIFIER = `${API}LOGISTICS_OBJECT_IDENTIFIER`;

/**
 * Asks a partner's `GET {server}/subscriptions?topicType=…LOGISTICS_OBJECT_IDENTIFIER&topic=<URI>`
 * (with its bearer token, and once more with a fresh one after a 401) and reads its answer. Never throws.
 */
export function createPartnerClient(deps: PartnerClientDeps = {}) {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const now = deps.now ?? (() => new Date());

  async function get(url: string, token: string | undefined, signal: AbortSignal) {
    const answer = await request(url, {
      method: "GET",
      ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
      headers: {
        accept: MEDIA_TYPE,
        "user-agent": USER_AGENT,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
    const bytes = await readBoundedBody(answer.body, MAX_ANSWER_BYTES);
    return { status: answer.statusCode, headers: answer.headers, bytes };
  }

  return {
    async ask(question: ProposalQuestion): Promise<ProposalAnswer> {
      const base = question.serverUrl.replace(/\/+$/, "");
      const url = `${base}/subscriptions?topicType=${encodeURIComponent(IDENTIFIER)}&topic=${encodeURIComponent(question.topic)}`;
      const signal = AbortSignal.timeout(timeoutMs);
      let answer: Awaited<ReturnType<typeof get>>;
      try {
        const token = deps.tokens ? await deps.tokens.token(signal, question.audience) : undefined;
        answer = await get(url, token, signal);
        if (answer.status === 401 && deps.tokens && token !== undefined) {
          // Asked again only with another token: the token client decides whether a 401 forgets one.
          deps.tokens.invalidate(token, question.audience);
          const fresh = await deps.tokens.token(signal, question.audience);
          if (fresh !== token) answer = await get(url, fresh, signal);
        }
      } catch (error) {
        const reason = error instanceof BodyTooLarge ? error.message : describeRequestFailure(error, timeoutMs);
        return error instanceof BodyTooLarge ? { kind: "refused", reason } : { kind: "unavailable", reason };
      }
      return readAnswer(answer, question, now());
    },
  };
}

async function readAnswer(
  answer: { status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer },
  question: ProposalQuestion,
  now: Date,
): Promise<ProposalAnswer> {
  const { status } = answer;
  if (status === 422) return { kind: "declined", reason: "it answered 422: it wants no subscription to this topic" };
  if (status >= 500 || status === 401 || status === 408 || status === 429) {
    const retryAfterMs = retryAfterOf(answer.headers["retry-after"]);
    return {
      kind: "unavailable",
      reason: `it answered HTTP ${status}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (status !== 200 && status !== 204) return { kind: "refused", reason: `it answered HTTP ${status}` };
  let text: string;
  try {
    // Strictly, as every JSON this gateway takes: bytes that are not UTF-8 are no answer it can read.
    text = decodeJsonText(answer.bytes);
  } catch (error) {
    return { kind: "refused", reason: `its answer is not JSON-LD this server can read: ${(error as Error).message}` };
  }
  if (text.trim() === "") return { kind: "declined", reason: "it answered no subscription" };
  let nodes;
  try {
    nodes = await readJsonLdNodes(JSON.parse(text));
  } catch (error) {
    return { kind: "refused", reason: `its answer is not JSON-LD this server can read: ${(error as Error).message}` };
  }
  const read = readProposalAnswer(nodes, { ...question, now });
  if (read.accepted.length > 0) return { kind: "subscribed", subscriptions: read.accepted, refused: read.refused };
  if (read.refused.length > 0)
    return { kind: "refused", reason: `its subscription was not taken: ${read.refused.join("; ")}` };
  return { kind: "declined", reason: "it answered no subscription" };
}

/** The partner's Retry-After (seconds or an HTTP date, read as the outbox reads it), at most an hour. */
function retryAfterOf(header: string | string[] | undefined): number | undefined {
  const ms = parseRetryAfter(header);
  return ms === null ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}
