/**
 * The dashboard and the GraphQL IDE in a real browser (Debian's Chromium via playwright-core),
 * against a real gateway. Screenshots of the main views go to test-output/screenshots.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson, postJson } from "./support/http";
import { describeWithBrowser, launchChromium, screenshot } from "./support/browser";
import { itInFullSuite } from "./support/suite";
import { within } from "./support/webhooks";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
// Valid check digits: the first seven serial digits mod 7.
const AWB_A = "020-12345675";
const AWB_B = "176-76543213";
/**
 * How long a live milestone may take to show in the page, and a page or a step to be ready: liveness
 * bounds, not latency claims, wide enough for a machine whose cores other tests hold.
 */
const LIVE_BOUND_MS = 20_000;
const STEP_BOUND_MS = 20_000;
/** A serial whose last digit is not the check digit (1234567 mod 7 is 5). */
const AWB_TYPO_CHECK_DIGIT = "020-12345678";

describeWithBrowser("dashboard and IDE in Chromium", () => {
  const disposers = new Disposers();
  let url: string;
  let browser: Browser;
  /** Every URL the pages asked for: all must be the gateway's own. */
  const requested: string[] = [];

  async function openPage(
    route: string,
    init?: (context: BrowserContext) => Promise<unknown>,
    base = url,
  ): Promise<Page> {
    // A fixed viewer zone and locale, so the times on the page can be checked exactly.
    const context = await browser.newContext({
      timezoneId: "America/New_York",
      locale: "en-US",
      viewport: { width: 1280, height: 860 },
    });
    disposers.add(() => context.close());
    await init?.(context);
    const page = await context.newPage();
    page.on("request", (request) => requested.push(request.url()));
    page.on("pageerror", (error) => requested.push(`pageerror: ${error.message}`));
    await page.goto(`${base}${route}`);
    return page;
  }

  async function ingest(events: unknown[], base = url): Promise<void> {
    const response = await postJson(`${base}/carrier/handling/shipment/events`, events, admin);
    expect(response.status).toBe(202);
  }

  async function connectWithKey(page: Page, key: string): Promise<void> {
    await page.fill("#api-key", key);
    await page.click(".key-form button[type=submit]");
  }

  async function watchAwb(page: Page, typed: string, canonical = typed): Promise<void> {
    await page.fill("#awb-input", typed);
    await page.press("#awb-input", "Enter");
    await page.locator(`article[data-awb="${canonical}"]`).waitFor({ timeout: STEP_BOUND_MS });
  }

  /** A browser that has used the dashboard before: key and watch list in its storage. */
  const returningViewer = (awbs: string[]) => (context: BrowserContext) =>
    context.addInitScript(
      ([key, list]) => {
        localStorage.setItem("cgw.apiKey", key);
        localStorage.setItem("cgw.watchedAwbs", list);
      },
      [ADMIN_KEY, JSON.stringify(awbs)] as const,
    );

  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    browser = await launchChromium();
    disposers.add(() => browser.close());
    // History that exists before the page opens.
    await ingest([
      { eventId: "hist-a-1", awb: AWB_A, state: "RCS", timestamp: "2026-11-20T07:30:00Z", station: "FRA" },
    ]);
  });
  afterAll(() => disposers.disposeAll());

  test("watches two AWBs: history first, then live milestones in the right timelines", async () => {
    const page = await openPage("/dashboard");
    await expect(page.locator(".connection").textContent()).resolves.toContain("enter an API key");
    await connectWithKey(page, ADMIN_KEY);
    await page.locator('.connection[data-state="connected"]').waitFor({ timeout: STEP_BOUND_MS });

    await watchAwb(page, AWB_A);
    await watchAwb(page, "176 76543213", AWB_B); // another accepted form, shown canonically
    const cardA = page.locator(`article[data-awb="${AWB_A}"]`);
    const cardB = page.locator(`article[data-awb="${AWB_B}"]`);
    // From the stored history: state spelled out, the viewer's time (New York) and the station's (Frankfurt).
    const history = cardA.locator('li[data-state="RCS"]');
    await history.waitFor({ timeout: STEP_BOUND_MS });
    await expect(history.locator(".state-name").textContent()).resolves.toBe("Received from shipper");
    await expect(history.locator(".viewer-time").textContent()).resolves.toBe("Nov 20, 2026, 2:30 AM");
    await expect(history.locator(".station-time").textContent()).resolves.toBe(" · 8:30 AM GMT+1 at FRA"); // same day in both zones: no date repeated
    await expect(cardB.locator(".card-status").textContent()).resolves.toContain("No milestones yet");

    // Live: each AWB's milestone appears in its own card, and only there.
    await ingest([
      {
        eventId: "live-a-dep",
        awb: AWB_A,
        state: "DEP",
        timestamp: "2026-11-21T09:15:00Z",
        station: "FRA",
        flight: "LH8160",
      },
      { eventId: "live-b-rcs", awb: AWB_B, state: "RCS", timestamp: "2026-11-21T10:00:00Z", station: "JFK" },
      {
        eventId: "live-b-arr",
        awb: AWB_B,
        state: "ARR",
        timestamp: "2026-11-21T20:00:00Z",
        station: "HKG",
        flight: "CX889",
      },
    ]);
    // Waited for, with a liveness bound in seconds: a milestone that never arrives fails, a slow machine does not.
    await cardA.locator('li[data-state="DEP"]').waitFor({ timeout: LIVE_BOUND_MS });
    await cardB.locator('li[data-state="RCS"]').waitFor({ timeout: LIVE_BOUND_MS });
    await cardB.locator('li[data-state="ARR"]').waitFor({ timeout: LIVE_BOUND_MS });
    await expect(cardA.locator("li.milestone").count()).resolves.toBe(2);
    await expect(cardB.locator("li.milestone").count()).resolves.toBe(2);
    await expect(cardA.locator("li.milestone").first().getAttribute("data-state")).resolves.toBe("DEP"); // newest first
    await expect(cardA.locator('li[data-state="DEP"] .state-name').textContent()).resolves.toBe(
      "Departed · flight LH8160",
    );
    await expect(cardB.locator('li[data-state="RCS"] .station-time').textContent()).resolves.toBe(
      " · 5:00 AM EST at JFK",
    );
    // 3 PM in New York is already the next day in Hong Kong: the station's date is shown.
    await expect(cardB.locator('li[data-state="ARR"] .station-time').textContent()).resolves.toBe(
      " · Nov 22, 4:00 AM GMT+8 at HKG",
    );
    await expect(cardA.locator(".latest").textContent()).resolves.toBe("Departed");

    // A reload keeps the key and the watch list, and refills the timelines from history.
    await page.reload();
    await page.locator('.connection[data-state="connected"]').waitFor({ timeout: STEP_BOUND_MS });
    await page.locator(`article[data-awb="${AWB_A}"] li[data-state="DEP"]`).waitFor({ timeout: STEP_BOUND_MS });
    await expect(page.locator("article.card").count()).resolves.toBe(2);
    await screenshot(page, "dashboard-live");
  }, 240_000);

  itInFullSuite(
    "typing mistakes in an AWB are caught before anything is sent; a wrong check digit warns first",
    async () => {
      const page = await openPage("/dashboard", (context) => context.addInitScript(() => localStorage.clear()));
      await connectWithKey(page, ADMIN_KEY);
      await page.locator('.connection[data-state="connected"]').waitFor({ timeout: STEP_BOUND_MS });
      const sentBodies: string[] = [];
      page.on("request", (request) => sentBodies.push(request.postData() ?? ""));

      await page.fill("#awb-input", "020-1234567");
      await expect(page.locator("#awb-message").textContent()).resolves.toContain("this has 10");
      await expect(page.locator("#awb-input").getAttribute("aria-invalid")).resolves.toBe("true");
      await page.press("#awb-input", "Enter");
      await page.fill("#awb-input", "02O-12345675"); // a letter O for a zero
      await expect(page.locator("#awb-message").textContent()).resolves.toContain("only digits");
      await page.press("#awb-input", "Enter");
      await expect(page.locator("article.card").count()).resolves.toBe(0);

      await page.fill("#awb-input", AWB_TYPO_CHECK_DIGIT);
      await page.press("#awb-input", "Enter");
      await expect(page.locator("#awb-message").textContent()).resolves.toContain("should be 5");
      await expect(page.locator(".awb-form button").textContent()).resolves.toBe("Watch anyway");
      await expect(page.locator("article.card").count()).resolves.toBe(0);
      await screenshot(page, "dashboard-check-digit-warning");
      expect(sentBodies.filter((body) => body.includes("1234567"))).toEqual([]);

      // Confirmed: now it is watched (the gateway accepts it, as AWB_CHECK_DIGIT=off does).
      await page.click(".awb-form button");
      await page
        .locator(`article[data-awb="${AWB_TYPO_CHECK_DIGIT}"] .card-status`)
        .filter({ hasText: "No milestones yet" })
        .waitFor({ timeout: STEP_BOUND_MS });
    },
  );

  itInFullSuite("a wrong key shows a refusal", async () => {
    const page = await openPage("/dashboard", (context) => context.addInitScript(() => localStorage.clear()));
    await connectWithKey(page, "cgw_this-key-does-not-exist");
    const badge = page.locator('.connection[data-state="refused"]');
    await badge.waitFor({ timeout: STEP_BOUND_MS });
    await expect(badge.textContent()).resolves.toMatch(/^Key refused: .+/);
    await screenshot(page, "dashboard-key-refused");
  });

  itInFullSuite("a station in a timeline opens its details", async () => {
    const page = await openPage("/dashboard", returningViewer([AWB_A]));
    await page.locator(`article[data-awb="${AWB_A}"] li[data-state="DEP"]`).waitFor({ timeout: STEP_BOUND_MS });
    await page.locator(`article[data-awb="${AWB_A}"] li[data-state="DEP"] .station-link`).click();
    const dialog = page.locator("dialog.station-dialog");
    await dialog.locator("h2").filter({ hasText: "Frankfurt" }).waitFor({ timeout: STEP_BOUND_MS });

    const { body: fra } = await getJson(`${url}/carrier/stations/station/FRA`);
    const text = (await dialog.textContent()) ?? "";
    expect(text).toContain(fra.name);
    expect(text).toContain(fra.export.address.city);
    expect(text).toContain(fra.export.contact.generalPhone);
    const exportOpen = await dialog.locator('[data-side="export"] .badge').getAttribute("data-open");
    const { data } = await postJson(`${url}/graphql`, {
      query: '{ station(code: "FRA") { openAt(side: EXPORT) } }',
    }).then((r) => r.body);
    expect(exportOpen).toBe(String(data.station.openAt));
    await expect(dialog.locator('[data-side="export"] table.hours tr').count()).resolves.toBe(7);
    // The sample data gives FRA no temperature-controlled products: both are shown as not offered.
    const { body: products } = await getJson(`${url}/carrier/stations/products/FRA`);
    expect([products.active.available, products.passive.available]).toEqual([false, false]);
    await expect(dialog.locator(".products .product p").allTextContents()).resolves.toEqual([
      "Not offered",
      "Not offered",
    ]);
    await screenshot(page, "dashboard-station-details");
    await dialog.locator(".dialog-close").click();
    await expect(dialog.isVisible()).resolves.toBe(false);
  });

  test("the IDE at /graphql runs a query and a subscription", async () => {
    // The key the dashboard stored becomes the IDE's Authorization header.
    const query = '{ station(code: "FRA") { code name timeZone } }';
    const page = await openPage(`/graphql?query=${encodeURIComponent(query)}`, returningViewer([]));
    await page.locator(".graphiql-execute-button").waitFor({ timeout: STEP_BOUND_MS });
    await page.click(".graphiql-execute-button");
    const result = page.locator(".result-window");
    await result.filter({ hasText: "Europe/Berlin" }).waitFor({ timeout: STEP_BOUND_MS });
    await screenshot(page, "ide-query");

    const subscription = `subscription { awbStatusChanged(awb: "${AWB_B}") { awb state station } }`;
    await page.goto(`${url}/graphql?query=${encodeURIComponent(subscription)}`);
    await page.locator(".graphiql-execute-button").waitFor({ timeout: STEP_BOUND_MS });
    await page.click(".graphiql-execute-button");
    // The socket is open once the gateway has the subscription; ingest until the result shows it.
    const deadline = Date.now() + STEP_BOUND_MS;
    let n = 0;
    while (!(await result.filter({ hasText: '"ARR"' }).count()) && Date.now() < deadline) {
      await ingest([
        { eventId: `ide-arr-${++n}`, awb: AWB_B, state: "ARR", station: "LHR", timestamp: new Date().toISOString() },
      ]);
      await page.waitForTimeout(300);
    }
    expect.assertions(n + 2); // one per ingestion (`ingest` checks its 202), and the two below
    await expect(result.textContent()).resolves.toContain('"ARR"');
    await expect(result.textContent()).resolves.toContain('"LHR"');
    await screenshot(page, "ide-subscription");
  }, 120_000);

  test("the IDE says where the key goes when a subscription is run without one", async () => {
    // A first visit: no stored key, so the Headers tab is empty.
    const subscription = `subscription { awbStatusChanged(awb: "${AWB_A}") { state } }`;
    const page = await openPage(`/graphql?query=${encodeURIComponent(subscription)}`);
    await page.locator(".graphiql-execute-button").waitFor({ timeout: STEP_BOUND_MS });
    await page.click(".graphiql-execute-button");
    const result = page.locator(".result-window");
    await result.filter({ hasText: "Headers tab" }).waitFor({ timeout: STEP_BOUND_MS });
    const text = (await result.textContent()) ?? "";
    // The result shows the error as JSON, its quotes escaped.
    expect(text).toContain('put it in the Headers tab below, as {\\"Authorization\\": \\"Bearer <key>\\"}');
    expect(text).not.toContain("connection_init");
    await screenshot(page, "ide-subscription-without-key");
  });

  itInFullSuite("the IDE's example fits its editor at 1280 px: no line runs past the visible width", async () => {
    // A first visit: no stored key, so the editor shows the example and its comments.
    const page = await openPage("/graphql");
    const editor = page.locator(".graphiql-query-editor .CodeMirror-scroll").first();
    await page
      .locator(".graphiql-query-editor .CodeMirror-line", { hasText: "Authorization" })
      .waitFor({ timeout: STEP_BOUND_MS });
    const widths = await editor.evaluate((scroll) => ({ content: scroll.scrollWidth, visible: scroll.clientWidth }));
    expect(widths.content).toBeLessThanOrEqual(widths.visible);
  });

  itInFullSuite(
    "the IDE loads the schema (standard introspection passes the limits): its docs explorer shows the types",
    async () => {
      const consoleErrors: string[] = [];
      // Listening from before the page loads: the schema is fetched as it starts.
      const page = await openPage("/graphql", async (context) => {
        await returningViewer([])(context);
        context.on("console", (message) => message.type() === "error" && consoleErrors.push(message.text()));
      });
      await page.locator(".graphiql-execute-button").waitFor({ timeout: STEP_BOUND_MS });
      await page.click('button[aria-label="Show Documentation Explorer"]');
      const explorer = page.locator(".graphiql-doc-explorer");
      await explorer.getByText("Query", { exact: true }).first().waitFor({ timeout: STEP_BOUND_MS });
      await explorer.getByText("Subscription", { exact: true }).first().waitFor({ timeout: STEP_BOUND_MS });
      await screenshot(page, "ide-docs");
      const text = (await page.textContent("body")) ?? "";
      expect(text).not.toContain("Error fetching schema");
      expect(text).not.toContain("QUERY_TOO_COMPLEX");
      expect(consoleErrors).toEqual([]);
    },
    120_000,
  );

  itInFullSuite(
    "the REST docs at /docs render the API with no console error (Content-Security-Policy included)",
    async () => {
      const consoleErrors: string[] = [];
      const context = await browser.newContext();
      disposers.add(() => context.close());
      const page = await context.newPage();
      page.on("console", (message) => message.type() === "error" && consoleErrors.push(message.text()));
      page.on("pageerror", (error) => consoleErrors.push(error.message));
      await page.goto(`${url}/docs`);
      await page
        .getByText("/carrier/handling/shipment/events", { exact: false })
        .first()
        .waitFor({ timeout: STEP_BOUND_MS });
      await screenshot(page, "rest-docs");
      expect(consoleErrors).toEqual([]);
    },
  );

  itInFullSuite(
    "the connection state follows the gateway going away and coming back, and the timeline resumes",
    async () => {
      const awb = "618-10000011";
      const dataDir = mkdtempSync(path.join(tmpdir(), "cgw-dashboard-"));
      disposers.add(() => rmSync(dataDir, { recursive: true, force: true }));
      // Each step that has no timeout of its own gets one: a hang names its step (one CI run timed out
      // here once, unexplained).
      const first = await within(
        "the first start",
        30_000,
        startApp("pglite", disposers, { DATA_DIR: dataDir, RATE_LIMIT_PER_SECOND: "0" }),
      );
      const page = await openPage("/dashboard", returningViewer([awb]), first.url);
      await page.locator('.connection[data-state="connected"]').waitFor({ timeout: STEP_BOUND_MS });
      const card = page.locator(`article[data-awb="${awb}"]`);
      await within("the first ingestion", STEP_BOUND_MS, ingest([{ awb, state: "RCS", station: "AMS" }], first.url));
      await card.locator('li[data-state="RCS"]').waitFor({ timeout: LIVE_BOUND_MS });

      await within("the stop", STEP_BOUND_MS, first.app.stop());
      await page.locator('.connection[data-state="reconnecting"]').waitFor({ timeout: STEP_BOUND_MS });
      await screenshot(page, "dashboard-reconnecting");

      // The same gateway again (same port, same data), as after a restart.
      const second = await within(
        "the restart",
        30_000,
        startApp("pglite", disposers, {
          DATA_DIR: dataDir,
          PORT: new URL(first.url).port,
          RATE_LIMIT_PER_SECOND: "0",
        }),
      );
      await page.locator('.connection[data-state="connected"]').waitFor({ timeout: STEP_BOUND_MS });
      await within("the second ingestion", STEP_BOUND_MS, ingest([{ awb, state: "MAN", station: "AMS" }], second.url));
      await card.locator('li[data-state="MAN"]').waitFor({ timeout: LIVE_BOUND_MS });
      await expect(card.locator("li.milestone").count()).resolves.toBe(2);
    },
    240_000,
  );

  test("every page loaded only from the gateway itself, and no script failed", () => {
    expect(requested.length).toBeGreaterThan(10);
    const local = /^(https?|wss?):\/\/127\.0\.0\.1:\d+\//;
    expect(requested.filter((r) => !local.test(r) && !r.startsWith("data:"))).toEqual([]);
  });
});
