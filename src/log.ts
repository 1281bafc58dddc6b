import pino, { type Logger } from "pino";
import type { Config } from "./config";

/** Structured JSON logs; secrets in headers never reach them. */
export function createLogger(level: Config["logLevel"]): Logger {
  return pino({
    level,
    base: { service: "cargo-gateway" },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ["req.headers.authorization", "*.authorization", "*.apiKey", "*.signingSecret"],
      censor: "[redacted]",
    },
  });
}
