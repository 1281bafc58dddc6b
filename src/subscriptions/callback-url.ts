import { AppError } from "../errors";

/** CONTRACT §2: a callback URL is at most this long. */
const MAX_CALLBACK_LENGTH = 2_048;

/** A callback URL that parses as an absolute http(s) URL without credentials; normalised. */
export function parseCallbackUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AppError("CALLBACK_INVALID", `The callback "${value.slice(0, 200)}" is not an absolute URL`);
  }
  if (value.length > MAX_CALLBACK_LENGTH)
    throw new AppError("CALLBACK_INVALID", `The callback is longer than ${MAX_CALLBACK_LENGTH} characters`);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AppError("CALLBACK_INVALID", `The callback must be an http or https URL, not ${url.protocol}`);
  if (url.username || url.password)
    throw new AppError("CALLBACK_INVALID", "The callback must not carry credentials in the URL");
  if (url.hash) throw new AppError("CALLBACK_INVALID", "The callback must not have a fragment (#…)");
  return url;
}

/** Prefixes are compared with the normalised URL; "*" registers any URL. */
export function isRegistered(url: URL, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => prefix === "*" || url.href.startsWith(prefix));
}
