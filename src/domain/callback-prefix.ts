/**
 * A client's registered callback prefix (CONTRACT §2) is a URL, read as one: a callback is within it
 * when it has the prefix's origin (scheme, host and port, as the URL parser normalises them: host in
 * lower case, a default port the same as none) and its path starts with the prefix's path segments.
 * "*" registers any URL.
 */

/** CONTRACT §2: a callback URL is at most this long, and so is a prefix. */
export const MAX_CALLBACK_LENGTH = 2_048;

/** A prefix as read: "any", or an origin and the path segments a callback's path must start with. */
export type CallbackPrefix = "any" | { readonly origin: string; readonly segments: readonly string[] };

/** Why a text is not a prefix, or the prefix it is. */
export function readCallbackPrefix(text: string): { prefix: CallbackPrefix } | { problem: string } {
  if (text === "*") return { prefix: "any" };
  if (text.length > MAX_CALLBACK_LENGTH) return { problem: `is longer than ${MAX_CALLBACK_LENGTH} characters` };
  // The URL parser drops tabs and line breaks and trims spaces: refused, so what is stored is what is read.
  if (/[\s\p{Cc}]/u.test(text)) return { problem: "must not hold a space or control character" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "is not an absolute URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { problem: `must be an http or https URL, not ${url.protocol}` };
  if (url.hostname === "") return { problem: "is not an absolute URL with a host" };
  if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/]*@/i.test(text))
    return { problem: "must not carry credentials (user@): the host is what follows the @" };
  if (text.includes("?")) return { problem: "must not have a query (?…): a prefix is an origin and a path" };
  if (text.includes("#")) return { problem: "must not have a fragment (#…)" };
  return { prefix: { origin: url.origin, segments: trimTrailingEmpty(segmentsOf(url.pathname)) } };
}

/** Whether `prefix` admits the callback `url` (an absolute http(s) URL). */
export function prefixAdmits(prefix: CallbackPrefix, url: URL): boolean {
  if (prefix === "any") return true;
  if (url.origin !== prefix.origin) return false;
  if (prefix.segments.length === 0) return true;
  // An encoded "/" or "\" would let a receiver that decodes it see other segments than these.
  if (/%2f|%5c/i.test(url.pathname)) return false;
  const segments = segmentsOf(url.pathname);
  return prefix.segments.every((segment, i) => segments[i] === segment);
}

/**
 * A path's segments, each in RFC 3986's normal form (§6.2.2): percent-encoded unreserved characters
 * decoded, other escapes in upper case. Dot segments the URL parser has already resolved.
 */
function segmentsOf(pathname: string): string[] {
  return pathname
    .split("/")
    .slice(1)
    .map((segment) =>
      segment.replace(/%[0-9a-f]{2}/gi, (escape) => {
        const char = String.fromCharCode(parseInt(escape.slice(1), 16));
        return /[A-Za-z0-9\-._~]/.test(char) ? char : escape.toUpperCase();
      }),
    );
}

/** "/hooks/" names the same segment as "/hooks": a trailing slash on a prefix is insignificant. */
function trimTrailingEmpty(segments: string[]): string[] {
  let end = segments.length;
  while (end > 0 && segments[end - 1] === "") end--;
  return segments.slice(0, end);
}
