import { parseAwb } from "../../src/domain/awb";

/** What the "watch an AWB" field makes of its text, before anything is sent (same rules as the server). */
export type AwbVerdict =
  | { kind: "empty" }
  | { kind: "invalid"; message: string }
  | { kind: "duplicate"; awb: string }
  | { kind: "check-digit"; awb: string; message: string }
  | { kind: "ok"; awb: string };

export function judgeAwb(text: string, watched: ReadonlySet<string>): AwbVerdict {
  const trimmed = text.trim();
  if (trimmed === "") return { kind: "empty" };
  const parsed = parseAwb(trimmed);
  if (!parsed) {
    const digits = trimmed.replace(/[^0-9]/g, "").length;
    const hint = /[^0-9 -]/.test(trimmed)
      ? "only digits, a dash or a space"
      : `11 digits (3-digit airline prefix and 8-digit serial), this has ${digits}`;
    return { kind: "invalid", message: `An AWB looks like 020-12345675: ${hint}.` };
  }
  if (watched.has(parsed.canonical)) return { kind: "duplicate", awb: parsed.canonical };
  if (!parsed.checkDigitValid) {
    const serial = parsed.canonical.slice(4);
    const expected = Number(serial.slice(0, 7)) % 7;
    return {
      kind: "check-digit",
      awb: parsed.canonical,
      message: `The check digit of ${parsed.canonical} should be ${expected} (first seven serial digits mod 7), not ${serial[7]}: probably a typing mistake.`,
    };
  }
  return { kind: "ok", awb: parsed.canonical };
}
