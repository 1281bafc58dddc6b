import { Counter, type Registry } from "prom-client";
import type { ProposalOutcome } from "./proposals.worker";

/** The proposal loop's counter, on the app's registry (the one /metrics serves). */
export function createProposalMetrics(registry: Registry) {
  const proposals = new Counter({
    name: "gateway_onerecord_proposals_total",
    help: "Subscriptions this instance proposed to ONE Record partners (their GET /subscriptions), by what became of each question",
    labelNames: ["outcome"],
    registers: [registry],
  });
  return { outcome: (outcome: ProposalOutcome) => proposals.inc({ outcome }) };
}
