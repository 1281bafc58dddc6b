import { type Dispatcher, request } from "undici";
import { BodyTooLarge, readBoundedBody } from "./bounded-body";
import { describeRequestFailure } from "./request-failure";

/** Where and as whom this server asks for the access tokens it sends ONE Record notifications with. */
export interface TokenSettings {
  /** The OAuth 2.0 token endpoint (ONE_RECORD_TOKEN_URL). */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `scope` of the request, when set. */
  readonly scope: string | undefined;
  /**
   * `audience` of the request, when set (Auth0, Keycloak and others read it; RFC 8707 names it `resource`):
   * the default audience (ONE_RECORD_TOKEN_AUDIENCE), for callers that name none.
   */
  readonly audience: string | undefined;
}

/** The token endpoint gave no usable token: its answer or its failure, described for a delivery's last_error. */
export class TokenEndpointError extends Error {
  readonly code = "ERR_TOKEN_ENDPOINT";
  constructor(reason: string) {
    super(reason);
    this.name = "TokenEndpointError";
  }
}

export interface TokenClient {
  /**
   * A bearer token for `audience` (the settings' audience when undefined) valid for a while yet: the
   * one remembered for that audience, else one fetched for it. Concurrent callers of one audience
   * share one fetch. `signal` ends this caller's wait, not the shared fetch. Throws
   * TokenEndpointError when the endpoint gives none.
   */
  token(signal?: AbortSignal, audience?: string): Promise<string>;
  /**
   * A receiver refused `token` of `audience` (401): forgets it, and answers true, when it is the one
   * remembered and no 401 made this audience's token be forgotten in the last REFRESH_AFTER_401_MS;
   * false otherwise (another token has replaced it already, or a refresh was made too recently: a
   * receiver answering 401 to every token does not make one token request per notification, nor
   * throw away, more than once per interval, the token other receivers of that audience are sent).
   */
  invalidate(token: string, audience?: string): boolean;
}

/** How long one token request may take. */
export const TOKEN_TIMEOUT_MS = 5_000;
/** A token is used until this long before it expires, or half its lifetime when that is shorter. */
export const EXPIRY_MARGIN_MS = 30_000;
/** How long a token whose answer gave no `expires_in` is used (RFC 6749 §5.1 only recommends it). */
export const UNSTATED_LIFETIME_MS = 60_000;
/** At most one token of an audience is forgotten because of a 401 in this interval. */
export const REFRESH_AFTER_401_MS = 10_000;
/** The most of an error answer's `error` and `error_description` kept in the message. */
const MAX_REASON = 200;
/** A token answer is a few KiB at most (a JWT and its lifetime): more is not read. */
export const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/**
 * An OAuth 2.0 client-credentials grant (RFC 6749 §4.4) against `settings.url`: the client
 * authenticates with HTTP Basic (§2.3.1, the method every server must support; one method per
 * request, §2.3), one token per audience, each remembered until `expires_in` minus a margin, and
 * concurrent callers of an audience share one request. A failed request is not remembered: the next
 * caller asks again. A token asked for one audience is never handed out for another.
 */
export function createTokenClient(
  settings: TokenSettings,
  deps: {
    dispatcher?: Dispatcher;
    now?: () => number;
    /** Each token request's outcome (metrics). */
    onRequest?: (outcome: "ok" | "failed") => void;
  } = {},
): TokenClient {
  const now = deps.now ?? Date.now;
  /** Per audience ("" for the request without one): its token, its fetch in flight, its last 401 refresh. */
  const states = new Map<
    string,
    { current?: { token: string; useUntil: number }; fetching?: Promise<string>; forgotAt?: number }
  >();
  const stateOf = (audience: string | undefined) => {
    const key = audience ?? "";
    let state = states.get(key);
    if (!state) states.set(key, (state = {}));
    return state;
  };
  // RFC 6749 §2.3.1: the id and the secret are form-encoded before they are joined and base64-encoded.
  const basic = Buffer.from(
    `${encodeURIComponent(settings.clientId).replace(/%20/g, "+")}:${encodeURIComponent(settings.clientSecret).replace(/%20/g, "+")}`,
  ).toString("base64");
  const bodyFor = (audience: string | undefined) => {
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (settings.scope !== undefined) form.set("scope", settings.scope);
    if (audience !== undefined) form.set("audience", audience);
    return form.toString();
  };

  async function fetchToken(audience: string | undefined): Promise<string> {
    const requestedAt = now();
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(settings.url, {
        method: "POST",
        ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
        body: bodyFor(audience),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
          authorization: `Basic ${basic}`,
        },
        headersTimeout: TOKEN_TIMEOUT_MS,
        bodyTimeout: TOKEN_TIMEOUT_MS,
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      });
    } catch (error) {
      throw new TokenEndpointError(`the token endpoint: ${describeRequestFailure(error, TOKEN_TIMEOUT_MS)}`);
    }
    let text: string;
    try {
      text = (await readBoundedBody(answer.body, MAX_TOKEN_ANSWER_BYTES)).toString("utf8");
    } catch (error) {
      throw new TokenEndpointError(
        error instanceof BodyTooLarge
          ? `the token endpoint's answer: ${error.message}`
          : `the token endpoint's answer was cut short: ${describeRequestFailure(error, TOKEN_TIMEOUT_MS)}`,
      );
    }
    const json = parseObject(text);
    if (answer.statusCode !== 200) {
      const reason = [json?.error, json?.error_description].filter((v) => typeof v === "string").join(": ");
      throw new TokenEndpointError(
        `the token endpoint answered HTTP ${answer.statusCode}${reason ? ` (${reason.slice(0, MAX_REASON)})` : ""}`,
      );
    }
    const token = json?.access_token;
    if (typeof token !== "string" || token === "" || !/^[\x21-\x7e]+$/.test(token))
      throw new TokenEndpointError("the token endpoint's answer holds no access_token");
    const type = json?.token_type;
    if (type !== undefined && (typeof type !== "string" || type.toLowerCase() !== "bearer"))
      throw new TokenEndpointError(`the token endpoint gave a ${JSON.stringify(type)} token, not a bearer token`);
    const expiresIn = json?.expires_in;
    const lifetimeMs =
      typeof expiresIn === "number" && Number.isFinite(expiresIn) && expiresIn > 0
        ? expiresIn * 1000
        : UNSTATED_LIFETIME_MS;
    // Counted from when it was asked for: the endpoint's clock started no earlier.
    stateOf(audience).current = {
      token,
      useUntil: requestedAt + lifetimeMs - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 2),
    };
    return token;
  }

  return {
    token(signal, audience = settings.audience) {
      const state = stateOf(audience);
      if (state.current && now() < state.current.useUntil) return Promise.resolve(state.current.token);
      state.fetching ??= fetchToken(audience).then(
        (token) => {
          state.fetching = undefined;
          deps.onRequest?.("ok");
          return token;
        },
        (error: unknown) => {
          state.fetching = undefined;
          deps.onRequest?.("failed");
          throw error;
        },
      );
      if (!signal) return state.fetching;
      const shared = state.fetching;
      return new Promise<string>((resolve, reject) => {
        const abort = () => reject(new TokenEndpointError("no token from the token endpoint in the attempt's time"));
        if (signal.aborted) return abort();
        signal.addEventListener("abort", abort, { once: true });
        shared.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
      });
    },
    invalidate(token, audience = settings.audience) {
      const state = stateOf(audience);
      if (state.current?.token !== token) return false;
      if (state.forgotAt !== undefined && now() - state.forgotAt < REFRESH_AFTER_401_MS) return false;
      state.current = undefined;
      state.forgotAt = now();
      return true;
    },
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
