/**
 * The HTML of the browser pages. Each is a shell that loads its bundle from /assets; the content is
 * built by the bundle, so these stay static (nothing from the request is written into them).
 */
function page(title: string, bundle: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${bundle}.css">
<script defer src="/assets/${bundle}.js"></script>
</head>
<body>
${body}
<noscript>This page needs JavaScript.</noscript>
</body>
</html>
`;
}

export const DASHBOARD_HTML = page("AWB milestones · Cargo gateway", "dashboard", "");
export const IDE_HTML = page("GraphQL IDE · Cargo gateway", "ide", '<div id="graphiql"></div>');

/**
 * Headers for the pages and their assets: scripts only from this origin, no framing, no referrer
 * leaking AWB numbers. Styles allow inline because GraphiQL's editor sets them from script.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
};
