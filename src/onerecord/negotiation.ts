/**
 * Content negotiation of the ONE Record API: JSON-LD only, in one of the API versions this server
 * speaks. The version a client asks for (`Accept: application/ld+json; version=2.2.0`) is echoed in the
 * answer's Content-Type; without one, the highest.
 */

/** Highest first: the one chosen when the client names none. */
export const SUPPORTED_API_VERSIONS = ["2.3.0", "2.2.0"] as const;
export type ApiVersion = (typeof SUPPORTED_API_VERSIONS)[number];

export const JSON_LD = "application/ld+json";
/** The only language bodies are written in. */
export const CONTENT_LANGUAGE = "en-US";

interface MediaRange {
  readonly type: string;
  readonly parameters: ReadonlyMap<string, string>;
  readonly quality: number;
}

/**
 * The API version to answer in, from the Accept header; undefined when nothing it accepts is JSON-LD
 * in a version this server speaks (406). No Accept header, `*\/*` and `application/*` accept JSON-LD.
 * Among acceptable ranges the highest quality wins, then the order given.
 */
export function negotiateApiVersion(accept: string | undefined): ApiVersion | undefined {
  if (accept === undefined || accept.trim() === "") return SUPPORTED_API_VERSIONS[0];
  let best: { version: ApiVersion; quality: number } | undefined;
  for (const range of parseMediaRanges(accept)) {
    if (range.quality <= 0) continue;
    const version = versionAcceptedBy(range);
    if (version !== undefined && (best === undefined || range.quality > best.quality))
      best = { version, quality: range.quality };
  }
  return best?.version;
}

function versionAcceptedBy(range: MediaRange): ApiVersion | undefined {
  if (range.type !== JSON_LD && range.type !== "application/*" && range.type !== "*/*") return undefined;
  const asked = range.parameters.get("version");
  if (asked === undefined) return SUPPORTED_API_VERSIONS[0];
  return SUPPORTED_API_VERSIONS.find((version) => version === asked);
}

/** The Content-Type of an answer in `version`. */
export function jsonLdContentType(version: ApiVersion): string {
  return `${JSON_LD}; version=${version}`;
}

function parseMediaRanges(header: string): MediaRange[] {
  return header
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const [type = "", ...rest] = part.split(";");
      const parameters = new Map<string, string>();
      let quality = 1;
      for (const parameter of rest) {
        const at = parameter.indexOf("=");
        if (at < 0) continue;
        const name = parameter.slice(0, at).trim().toLowerCase();
        const value = parameter
          .slice(at + 1)
          .trim()
          .replace(/^"(.*)"$/, "$1");
        if (name === "q") quality = Number.isFinite(Number(value)) ? Number(value) : 0;
        else parameters.set(name, value);
      }
      return { type: type.trim().toLowerCase(), parameters, quality };
    });
}
