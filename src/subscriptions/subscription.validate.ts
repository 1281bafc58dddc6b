import { splitStatesString, STATES_HINT } from "../domain/status";
import { type FieldError, validationError } from "../errors";
import type { SubscriptionInput } from "./subscription.service";

const SPELLINGS = {
  awb: ["awb", "AWB"],
  callback: ["callback", "Callback"],
  states: ["states", "States"],
  expiresAt: ["expiresAt", "ExpiresAt"],
} as const;

/**
 * Reads a create or update body. Either spelling of each field is accepted (create's `awb`, update's
 * `AWB`, …), not both at once; other fields are refused; `states` is one comma-separated string;
 * `expiresAt` is optional (absent or null: never expires).
 */
export function readSubscriptionBody(
  body: unknown,
  { withId }: { withId: boolean },
): { input: SubscriptionInput; subscriptionId: unknown } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw validationError([{ field: "body", message: "must be a JSON object with awb, callback and states" }]);
  }
  const record = body as Record<string, unknown>;
  const problems: FieldError[] = [];
  const known = new Set<string>([...Object.values(SPELLINGS).flat(), ...(withId ? ["subscriptionId"] : [])]);
  for (const key of Object.keys(record))
    if (!known.has(key)) problems.push({ field: key, message: "is not a known field" });

  const pick = (field: keyof typeof SPELLINGS, { optional = false } = {}): unknown => {
    const [lower, upper] = SPELLINGS[field];
    const present = [lower, upper].filter((k) => record[k] !== undefined);
    if (present.length === 2) problems.push({ field, message: `give ${lower} or ${upper}, not both` });
    if (present.length === 0 && !optional) problems.push({ field, message: "is required" });
    return record[lower] ?? record[upper];
  };
  const awb = pick("awb");
  const callback = pick("callback");
  const rawStates = pick("states");
  const expiresAt = pick("expiresAt", { optional: true });
  let states: unknown = rawStates;
  if (rawStates !== undefined) {
    // One string ("DEP, ARR", "DEP ARR") as the specification shows, or a JSON array of codes.
    if (typeof rawStates === "string") states = splitStatesString(rawStates);
    else if (!Array.isArray(rawStates) || rawStates.some((c) => typeof c !== "string"))
      problems.push({ field: "states", message: `must be ${STATES_HINT} (or an array of codes)` });
  }
  if (problems.length > 0) throw validationError(problems);
  return { input: { awb, callback, states, expiresAt }, subscriptionId: record.subscriptionId };
}
