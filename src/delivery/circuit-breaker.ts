/**
 * Per-origin circuit breakers of one delivery worker. An origin whose sends have failed
 * `failures` times in a row is "open": nothing is sent to it for `openMs`; then one probe goes
 * ("half-open"): a success closes it, a failure opens it again for twice as long (up to `maxOpenMs`).
 * Success and failure are the origin's (`originAnswered`), not the delivery's.
 * Failing receivers then cost one attempt per period instead of every due retry, and free the
 * worker's slots for origins that answer. Each worker keeps its own (several instances each probe).
 */

export interface CircuitOptions {
  /** Consecutive failed sends that open an origin's circuit (0: never open). */
  failures: number;
  /** How long it stays open the first time; doubled at each failed probe. */
  openMs: number;
  maxOpenMs: number;
}

type Circuit =
  | { state: "closed"; failures: number }
  | { state: "open"; until: number; openMs: number }
  | { state: "half-open"; openMs: number };

export interface CircuitChange {
  origin: string;
  /** "opened": stopped sending for `forMs`; "closed": a probe succeeded. */
  change: "opened" | "closed";
  forMs?: number;
}

/**
 * Whether a send's result counts for its origin's circuit as a success. Only no answer (a connection
 * error, a timeout, an address refused), 429 and 5xx count against the origin. Any other answer, a
 * 404 or 410 included, shows the origin answering: what it says about one callback path is that
 * subscription's own failure (its retries and its auto-disable clock), not a reason to stop sending
 * to every subscription on the origin.
 */
export function originAnswered(statusCode: number | null): boolean {
  return statusCode !== null && statusCode !== 429 && statusCode < 500;
}

/** Origins tracked at most (those counting failures; open ones are always kept). */
const MAX_ORIGINS = 10_000;

export function createCircuitBreakers(options: CircuitOptions, now: () => number) {
  const circuits = new Map<string, Circuit>();

  return {
    /**
     * Whether a send to `origin` may start now. An open circuit whose time is up lets exactly one
     * send through (the probe) and refuses the others until that one's outcome is known.
     */
    allows(origin: string): boolean {
      const circuit = circuits.get(origin);
      if (!circuit || circuit.state === "closed") return true;
      if (circuit.state === "half-open") return false;
      if (now() < circuit.until) return false;
      circuits.set(origin, { state: "half-open", openMs: circuit.openMs });
      return true;
    },

    /** Whether the origin takes no sends now (open, or its probe under way); unlike `allows`, changes nothing. */
    isClosedTo(origin: string): boolean {
      const circuit = circuits.get(origin);
      return circuit?.state === "half-open" || (circuit?.state === "open" && now() < circuit.until);
    },

    /**
     * A send that `allows` let through did not happen (given back: too little lease left, the worker
     * stopping, its secret too slow; or it threw): if it was the probe, the next send may probe.
     */
    abandon(origin: string): void {
      const circuit = circuits.get(origin);
      if (circuit?.state === "half-open") circuits.set(origin, { state: "open", until: now(), openMs: circuit.openMs });
    },

    /** Counts a send's outcome for its origin (`originAnswered`); answers the change it made, if any. */
    record(origin: string, answered: boolean): CircuitChange | undefined {
      const circuit = circuits.get(origin) ?? { state: "closed", failures: 0 };
      if (answered) {
        circuits.delete(origin);
        return circuit.state === "closed" ? undefined : { origin, change: "closed" };
      }
      if (circuit.state === "half-open") {
        const openMs = Math.min(options.maxOpenMs, circuit.openMs * 2);
        circuits.set(origin, { state: "open", until: now() + openMs, openMs });
        return { origin, change: "opened", forMs: openMs };
      }
      // A send that started before the circuit opened and failed after: nothing more to count.
      if (circuit.state === "open") return undefined;
      const failures = circuit.failures + 1;
      if (options.failures > 0 && failures >= options.failures) {
        circuits.set(origin, { state: "open", until: now() + options.openMs, openMs: options.openMs });
        return { origin, change: "opened", forMs: options.openMs };
      }
      circuits.delete(origin); // re-inserted last: the map's order is then least recently failed first
      circuits.set(origin, { state: "closed", failures });
      if (circuits.size > MAX_ORIGINS) {
        // Bounded: forget the oldest origin that is merely counting failures (it starts again from 0).
        for (const [known, c] of circuits)
          if (c.state === "closed") {
            circuits.delete(known);
            break;
          }
      }
      return undefined;
    },

    /** Origins that take no sends now (open, or half-open with the probe under way): not to be claimed. */
    closedTo(): string[] {
      const t = now();
      const origins: string[] = [];
      for (const [origin, circuit] of circuits)
        if (circuit.state === "half-open" || (circuit.state === "open" && t < circuit.until)) origins.push(origin);
      return origins;
    },

    /** How many origins are open or probing now. */
    openCount(): number {
      return this.closedTo().length;
    },
  };
}

export type CircuitBreakers = ReturnType<typeof createCircuitBreakers>;
