require("reflect-metadata");
const { createApp } = require("./dist/src/app");
const { loadConfig } = require("./dist/src/config");
const pino = require("pino");
const http = require("http");
const os = require("os"), fs = require("fs"), path = require("path");
(async () => {
  const recv = http.createServer((q, r) => { if (q.method === "OPTIONS") return r.writeHead(204, { allow: "POST" }).end(); q.resume(); q.on("end", () => r.writeHead(204).end()); }).listen(0);
  await new Promise(r => recv.on("listening", r));
  const dir = process.env.PG ? undefined : process.env.MEM ? "memory://" : fs.mkdtempSync(path.join(os.tmpdir(), "diag-"));
  const app = await createApp(loadConfig({ ...(dir ? { DATA_DIR: dir } : { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/diag" }), PORT: "0", BOOTSTRAP_API_KEY: "cgw_test-bootstrap-admin-key-0001", ALLOW_PRIVATE_CALLBACKS: "true", RATE_LIMIT_PER_SECOND: "0", DELIVERY_WORKER: "false" }), pino({ level: "warn" }));
  const url = await app.listen();
  const h = { authorization: "Bearer cgw_test-bootstrap-admin-key-0001", "content-type": "application/json" };
  const awbs = Array.from({ length: 50 }, (_, i) => { const s = String(3000000 + i); return `020-${s}${Number(s) % 7}`; });
  for (const awb of awbs) await fetch(url + "/carrier/handling/shipment/subscribe", { method: "POST", headers: h, body: JSON.stringify({ awb, callback: `http://127.0.0.1:${recv.address().port}/cb`, states: "*" }) });
  let t = performance.now();
  for (let b = 0; b < 20; b++) {
    const r = await fetch(url + "/carrier/handling/shipment/events", { method: "POST", headers: h, body: JSON.stringify(Array.from({ length: 500 }, (_, k) => ({ eventId: `b${b}-${k}`, awb: awbs[(b * 500 + k) % 50], state: "DEP" }))) });
    if (r.status !== 202) throw new Error(await r.text());
  }
  console.log("ingest 10k:", (performance.now() - t).toFixed(0), "ms");
  const { createDeliveryStore } = require("./dist/src/delivery/delivery.store");
  const store = createDeliveryStore(app.database.prisma);
  const timings = {};
  const sizes = []; const wrap = (name, fn) => async (...a) => { const s = performance.now(); try { const r = await fn(...a); if (name === "claimDue") sizes.push(r.length + "/" + a[0].limit); return r; } finally { const x = timings[name] ??= { n: 0, ms: 0 }; x.n++; x.ms += performance.now() - s; } };
  for (const k of ["claimDue", "release", "recordOutcomes", "deferOrigin"]) store[k] = wrap(k, store[k]);
  const { startDeliveryWorker } = require("./dist/src/delivery/delivery.runtime");
  const { createDeliveryMetrics } = require("./dist/src/delivery/delivery.metrics");
  const { createGuardedAgent } = require("./dist/src/outbound/guarded-agent");
  const config = loadConfig({ DATA_DIR: "memory://", ALLOW_PRIVATE_CALLBACKS: "true" });
  t = performance.now();
  const worker = startDeliveryWorker({ config, store, clients: app.services.clients, dispatcher: createGuardedAgent({ allowPrivate: true }), metrics: createDeliveryMetrics(store), log: pino({ level: "warn" }) });
  for (;;) { const [{ n }] = await app.database.prisma.$queryRawUnsafe("select count(*)::int n from delivery where status='PENDING'"); if (n === 0) break; await new Promise(r => setTimeout(r, 200)); }
  console.log(sizes.slice(0, 40).join(" ")); console.log("deliver 10k:", (performance.now() - t).toFixed(0), "ms", JSON.stringify(timings));
  let t2 = performance.now(); await worker.stop(); console.log("worker stop", performance.now() - t2); t2 = performance.now(); await app.stop(); console.log("app stop", performance.now() - t2); recv.close(); recv.closeAllConnections();
})().catch(e => { console.error(e); process.exit(1); });
