import { parseScopes } from "../src/clients/client.validate";
import { SCOPES } from "../src/clients/credentials";
import { AppError } from "../src/errors";

/** parsePrefixes is tested with the callback prefixes' other rules in callback-prefixes.test.ts. */
describe("a key's scopes as given", () => {
  /** What parseScopes throws for `values`, or undefined when it accepts them. */
  function refusalOf(values: readonly string[]): unknown {
    try {
      parseScopes(values);
    } catch (error) {
      return error;
    }
    return undefined;
  }

  it("are every known scope, once each, in the order given", () => {
    expect(parseScopes(["admin", "subscriptions", "admin"])).toEqual(["admin", "subscriptions"]);
    expect(parseScopes(SCOPES)).toEqual([...SCOPES]);
  });

  it("name at least one scope", () => {
    const refusal = refusalOf([]);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({
      code: "VALIDATION_FAILED",
      errors: [{ field: "scopes", message: "must name at least one scope" }],
    });
  });

  it("are refused when one is unknown, naming each unknown one and the known ones", () => {
    expect(refusalOf(["events:read", "root", "Admin"])).toMatchObject({
      code: "VALIDATION_FAILED",
      errors: [
        {
          field: "scopes",
          message:
            "unknown scope(s) root, Admin; known: subscriptions, events:read, events:write, objects:write, admin",
        },
      ],
    });
  });
});
