import { checkDigitValid, parseAwb } from "../src/domain/awb";
import type { AppError } from "../src/errors";
import { parseMilestones } from "../src/milestones/milestone.validate";
import { formatStates, matchesState, normaliseStates, splitStatesString } from "../src/domain/status";

describe("AWB parsing", () => {
  it.each([
    ["020-12345675", "020-12345675", true],
    ["02012345675", "020-12345675", true],
    ["020 12345675", "020-12345675", true],
    [" 176-98765432 ", "176-98765432", false],
  ])("reads %p as %p (check digit valid: %p)", (input, canonical, valid) => {
    expect(parseAwb(input)).toEqual({ canonical, checkDigitValid: valid });
  });

  it.each([
    "",
    "020-1234567",
    "020-123456755",
    "20-12345675",
    "020--12345675",
    "020_12345675",
    "abc-12345675",
    "020-1234567a",
    "020  12345675",
  ])("refuses %p", (input) => {
    expect(parseAwb(input)).toBeNull();
  });

  it("computes the check digit as the first seven serial digits mod 7", () => {
    expect(checkDigitValid("12345675")).toBe(true);
    expect(checkDigitValid("12345676")).toBe(false);
    expect(checkDigitValid("00000000")).toBe(true);
    expect(checkDigitValid("88888881")).toBe(true);
  });
});

describe("status codes", () => {
  it("orders codes as the status table, drops repeats, and lets * absorb the rest", () => {
    expect(normaliseStates(splitStatesString("TOA, dep,ARR, DEP"))).toEqual({
      states: ["DEP", "ARR", "TOA"],
      unknown: [],
    });
    expect(normaliseStates(["DIS", "*", "rcs"]).states).toEqual(["*"]);
    expect(normaliseStates(["DEP", "XYZ"]).unknown).toEqual(["XYZ"]);
    expect(formatStates(["DEP", "ARR"])).toBe("DEP,ARR");
  });

  it("matches a state against a selection", () => {
    expect(matchesState(["*"], "TOA")).toBe(true);
    expect(matchesState(["DEP", "ARR"], "ARR")).toBe(true);
    expect(matchesState(["DEP"], "ARR")).toBe(false);
  });
});

describe("a refused check digit", () => {
  it("names the digit the serial gives, in JSON ingestion's refusal under AWB_CHECK_DIGIT=enforce", () => {
    const refusal = (() => {
      try {
        parseMilestones(
          { awb: "020-12345670", state: "DEP", station: "FRA" },
          { enforceCheckDigit: true, now: new Date(), isStation: () => true },
        );
      } catch (error) {
        return error as AppError;
      }
      throw new Error("not refused");
    })();
    expect(refusal.errors).toEqual([
      { field: "awb", message: "020-12345670 has a wrong check digit: the first seven digits of its serial give 5" },
    ]);
  });
});
