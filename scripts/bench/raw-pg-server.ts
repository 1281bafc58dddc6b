// The baseline bench:subscriptions measures the gateway against: a bare `node:http` server, its own
// process like the gateway, doing each subscription operation's rows with raw `pg` (a pool of 10, as
// the gateway's) and answering JSON of the gateway's shape. Create sends the callback the same
// OPTIONS check (keep-alive undici agent, 2xx with POST in Allow) before its INSERT; get, update and
// delete are one statement each. No key, no validation, no cap: the least a service must do for the
// same rows. Its subscriptions belong to a client row of its own, so they do not count against the
// gateway's client. DATABASE_URL names the database; prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Agent, request } from "undici";

const BASE = "/carrier/handling/shipment/subscribe";
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const agent = new Agent();

type Row = { id: string; awb: string; callback: string; states: string[] };
const view = (row: Row) =>
  JSON.stringify({ subscriptionId: row.id, AWB: row.awb, Callback: row.callback, States: row.states.join(",") });

async function allowsPost(callback: string): Promise<boolean> {
  const response = await request(callback, {
    method: "OPTIONS",
    dispatcher: agent,
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
  await response.body.dump();
  const allow = String(response.headers.allow ?? "");
  return (
    response.statusCode >= 200 &&
    response.statusCode < 300 &&
    allow.split(",").some((m) => m.trim().toUpperCase() === "POST")
  );
}

async function main(): Promise<void> {
  const {
    rows: [client],
  } = await pool.query<{ id: string }>(
    `INSERT INTO client (id, name, callback_prefixes, signing_secret)
     VALUES (gen_random_uuid(), 'raw-pg baseline', '{*}', 'unused') RETURNING id::text AS id`,
  );
  const clientId = client!.id;
  const columns = "id::text AS id, awb, callback, states";

  // [status, JSON body, Location]
  async function handle(method: string, path: string, body: string): Promise<[number, string?, string?]> {
    const id = path.startsWith(`${BASE}/`) ? path.slice(BASE.length + 1) : undefined;
    if (method === "POST" && path === BASE) {
      const input = JSON.parse(body) as { awb: string; callback: string; states: string };
      if (!(await allowsPost(input.callback))) return [422, JSON.stringify({ code: "CALLBACK_INVALID" })];
      const { rows } = await pool.query<Row>(
        `INSERT INTO subscription (id, client_id, awb, callback, states, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, now())
         ON CONFLICT (client_id, awb, callback) DO NOTHING RETURNING ${columns}`,
        [clientId, input.awb, input.callback, input.states.split(",")],
      );
      const row = rows[0];
      return row ? [201, view(row), `${BASE}/${row.id}`] : [409, JSON.stringify({ code: "SUBSCRIPTION_EXISTS" })];
    }
    if (id === undefined) return [404];
    if (method === "GET") {
      const { rows } = await pool.query<Row>(`SELECT ${columns} FROM subscription WHERE id = $1 AND client_id = $2`, [
        id,
        clientId,
      ]);
      return rows[0] ? [200, view(rows[0])] : [404];
    }
    if (method === "PUT") {
      const input = JSON.parse(body) as { AWB: string; Callback: string; States: string };
      const { rows } = await pool.query<Row>(
        `UPDATE subscription SET awb = $3, callback = $4, states = $5, updated_at = now()
         WHERE id = $1 AND client_id = $2 RETURNING ${columns}`,
        [id, clientId, input.AWB, input.Callback, input.States.split(",")],
      );
      return rows[0] ? [200, view(rows[0])] : [404];
    }
    if (method === "DELETE") {
      const { rowCount } = await pool.query(`DELETE FROM subscription WHERE id = $1 AND client_id = $2`, [
        id,
        clientId,
      ]);
      return rowCount ? [204] : [404];
    }
    return [405];
  }

  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      handle(req.method ?? "GET", (req.url ?? "/").split("?")[0]!, body).then(
        ([status, json, location]) => {
          if (json === undefined) return void res.writeHead(status).end();
          res.writeHead(status, {
            "content-type": "application/json; charset=utf-8",
            "content-length": Buffer.byteLength(json),
            ...(location ? { location } : {}),
          });
          res.end(json);
        },
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ msg: "raw-pg listening", url: `http://127.0.0.1:${port}` }));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
