import { MAX_CALLBACK_LENGTH, prefixAdmits, readCallbackPrefix } from "../domain/callback-prefix";
import { AppError } from "../errors";

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

/**
 * Whether a client's prefixes admit the callback: its origin exactly, its path on segment boundaries
 * (domain/callback-prefix.ts). Stored prefixes are read here, so those stored before registration
 * checked them work as before when they are URLs; one that registration would refuse admits nothing.
 */
export function isRegistered(url: URL, prefixes: readonly string[]): boolean {
  return prefixes.some((text) => {
    const read = readCallbackPrefix(text);
    return "prefix" in read && prefixAdmits(read.prefix, url);
  });
}
