require("reflect-metadata");
const { createApp } = require("./dist/src/app");
const { loadConfig } = require("./dist/src/config");
const pino = require("pino");
const os = require("os"), fs = require("fs"), path = require("path");
const { spawn } = require("child_process");
(async () => {
  const rc = spawn(process.execPath, ["dist/scripts/bench/receiver.js"], { stdio: ["ignore", "pipe", "inherit"] });
  const rurl = await new Promise(r => rc.stdout.once("data", d => r(JSON.parse(String(d)).url)));
  const dir = process.env.PG ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), "diag-"));
  const app = await createApp(loadConfig({ ...(dir ? { DATA_DIR: dir } : { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/diag" }), PORT: "0", BOOTSTRAP_API_KEY: "cgw_test-bootstrap-admin-key-0001", ALLOW_PRIVATE_CALLBACKS: "true", RATE_LIMIT_PER_SECOND: "0" }), pino({ level: "warn" }));
  const url = await app.listen(); console.log("listening");
  const stats = {}; const p = app.database.prisma;
  if (process.env.STATS) for (const m of ["$queryRawUnsafe", "$executeRawUnsafe"]) { const orig = p[m].bind(p); p[m] = (sql, ...a) => { const k = sql.replace(/\s+/g, " ").slice(0, 60); const s = performance.now(); const r = orig(sql, ...a); Promise.resolve(r).then(() => { const x = stats[k] ??= { n: 0, ms: 0 }; x.n++; x.ms += performance.now() - s; }, () => {}); return r; }; }
  const h = { authorization: "Bearer cgw_test-bootstrap-admin-key-0001", "content-type": "application/json" };
  const awbs = Array.from({ length: 50 }, (_, i) => { const s = String(3000000 + i); return `020-${s}${Number(s) % 7}`; });
  for (const awb of awbs) await fetch(url + "/carrier/handling/shipment/subscribe", { method: "POST", headers: h, body: JSON.stringify({ awb, callback: `${rurl}/cb`, states: "*" }) });
  for (const k in stats) delete stats[k];
  console.log("subscribed"); let t = performance.now();
  for (let b = 0; b < 20; b++) {
    const r = await fetch(url + "/carrier/handling/shipment/events", { method: "POST", headers: h, body: JSON.stringify(Array.from({ length: 500 }, (_, k) => ({ eventId: `b${b}-${k}`, awb: awbs[(b * 500 + k) % 50], state: "DEP" }))) });
    if (r.status !== 202) throw new Error(await r.text());
  }
  const ti = performance.now() - t;
  for (let loops = 0; ; loops++) { const [{ n }] = await p.$queryRawUnsafe("select count(*)::int n from delivery where status='PENDING'"); if (loops % 40 === 39) console.log("pending", n, JSON.stringify(await p.$queryRawUnsafe("select count(*)::int c, (lease_until > now()) leased, (extract(epoch from min(next_attempt_at) - now()))::float8 wait from delivery where status='PENDING' group by 2"), (k, v) => typeof v === "bigint" ? String(v) : v), JSON.stringify(app.worker.load)); if (n === 0) break; await new Promise(r => setTimeout(r, 50)); }
  console.log("ingest", ti.toFixed(0), "total", (performance.now() - t).toFixed(0));
  for (const [k, v] of Object.entries(stats).sort((a, b) => b[1].ms - a[1].ms)) console.log(String(v.n).padStart(5), v.ms.toFixed(0).padStart(6), "ms", k);
  await app.stop(); rc.kill();
})().catch(e => { console.error(e); process.exit(1); });
