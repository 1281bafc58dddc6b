import { AppError } from "../../errors";

/**
 * The ONE Record base URL for what is built before the HTTP server listens (ingestion's
 * notifications): ONE_RECORD_BASE_URL when set, else the routes' own base once they are mounted
 * (`use`), which answers once the server listens. A notification due before then (a broker message
 * ingested during the start) fails its ingestion, which is tried again: its URIs cannot be written yet.
 */
export function createLateBase(configured: string | undefined) {
  let base: (() => string) | undefined = configured === undefined ? undefined : () => configured;
  return {
    get(): string {
      if (base === undefined)
        throw new AppError("SERVICE_UNAVAILABLE", "The ONE Record base URL is known once the server listens", {
          retryAfterSeconds: 1,
        });
      return base();
    },
    /** The routes' base (mount-onerecord.ts); a configured base URL stays. */
    use(routesBase: () => string): void {
      base ??= routesBase;
    },
  };
}

export type LateBase = ReturnType<typeof createLateBase>;
