// The attacker of test/onerecord/notifications-in.quota.http.test.ts, in a process of its own as it
// would be on another machine: POSTs FLOOD.count notifications of about FLOOD.bytes each to
// FLOOD.url, FLOOD.inFlight at a time, each with a new Notification-Id and 40 remarks of random base64
// (which does not compress). Prints one JSON line: the statuses in order of sending, and the first
// answer of each status (its Retry-After and body).
"use strict";
const { randomBytes, randomUUID } = require("node:crypto");

const { url, key, count, bytes, inFlight } = JSON.parse(process.env.FLOOD);
const API = "https://onerecord.iata.org/ns/api#";

function body() {
  const each = Math.floor((bytes - 400) / 40 - 40);
  const remarks = {};
  for (let i = 0; i < 40; i++)
    remarks[`https://1r.publisher.test/ns#remark${i}`] = randomBytes(Math.ceil((each * 3) / 4))
      .toString("base64")
      .slice(0, each);
  return JSON.stringify({
    "@context": { api: API },
    "@type": "api:Notification",
    "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
    "api:hasLogisticsObject": { "@id": `https://1r.publisher.test/logistics-objects/${randomUUID()}` },
    ...remarks,
  });
}

async function main() {
  const statuses = new Array(count);
  const first = {};
  let sentBytes = 0;
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const i = next++;
        const text = body();
        sentBytes += Buffer.byteLength(text);
        const res = await fetch(url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/ld+json",
            accept: "application/ld+json",
            "notification-id": randomUUID(),
          },
          body: text,
        });
        const answer = await res.text();
        statuses[i] = res.status;
        first[res.status] ??= { retryAfter: res.headers.get("retry-after"), body: answer };
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ statuses, first, sentBytes, ms: Date.now() - started })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
